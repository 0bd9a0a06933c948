/// Tests whose assertions rest on audio played in real time (speech scored by PESQ, browsers
/// hearing each other) take turns through this gate, so two of them never share the machine's
/// two cores with each other; everything else still runs beside them.
public actor RealTimeGate {
    public static let shared = RealTimeGate()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` when no other real-time test runs.
    public static func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await shared.enter()
        do {
            let result = try await body()
            await shared.leave()
            return result
        } catch {
            await shared.leave()
            throw error
        }
    }
}
