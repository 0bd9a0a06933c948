/// How much of a core a real-time thread may take: one that forwards voice should be given a
/// core the moment a packet arrives, but a flood must not let it keep one from the rest of the
/// machine. The thread reports its CPU time now and then; over a window in which it used more
/// than `ceiling` of a core it is told to become ordinary, and over one in which it used less
/// than `floor`, real-time again. Pure: time and CPU time come in, a decision comes out.
public struct RealtimeBudget: Sendable {
    /// Milliseconds a measure spans at least.
    public let window: Double
    /// Above this share of a core, the thread becomes ordinary.
    public let ceiling: Double
    /// Below this share, it becomes real-time again.
    public let floor: Double
    /// Whether the thread should be real-time now.
    public private(set) var realtime = true
    private var since: (time: Double, cpu: Double)?

    public init(window: Double = 1_000, ceiling: Double = 0.5, floor: Double = 0.25) {
        self.window = window
        self.ceiling = ceiling
        self.floor = floor
    }

    /// At `now` (monotonic ms) the thread had used `cpu` ms of CPU time; returns what it should
    /// become (`true`: real-time) when that changes, else nil.
    public mutating func observe(now: Double, cpu: Double) -> Bool? {
        guard let since else {
            self.since = (now, cpu)
            return nil
        }
        guard now - since.time >= window else { return nil }
        let share = (cpu - since.cpu) / (now - since.time)
        self.since = (now, cpu)
        if realtime, share > ceiling {
            realtime = false
            return false
        }
        if !realtime, share < floor {
            realtime = true
            return true
        }
        return nil
    }
}
