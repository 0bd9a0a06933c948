import Foundation
/// Tests whose assertions rest on audio played in real time (speech scored by PESQ, jitter
/// measured) take turns through this gate, so they never share the machine's two cores with
/// another heavy test; everything else still runs beside them. Heavy tests whose assertions do
/// not rest on timing (a browser's layout, a session's flow, a level heard or not) go through it
/// two at a time: never beside a real-time test, but beside one of their own kind.
public actor RealTimeGate {
    public static let shared = RealTimeGate()

    enum Lane {
        case alone
        case paired
    }

    /// How many paired tests run together (the machine has two cores).
    static let pairWidth = 2

    private var aloneRunning = false
    private var pairedRunning = 0
    private var waiting: [(lane: Lane, resume: CheckedContinuation<Void, Never>)] = []

    /// How many tests wait to go through.
    var waitingCount: Int { waiting.count }

    private func canStart(_ lane: Lane) -> Bool {
        switch lane {
        case .alone: !aloneRunning && pairedRunning == 0
        case .paired: !aloneRunning && pairedRunning < Self.pairWidth
        }
    }

    private func start(_ lane: Lane) {
        switch lane {
        case .alone: aloneRunning = true
        case .paired: pairedRunning += 1
        }
    }

    func enter(_ lane: Lane) async {
        if canStart(lane) {
            start(lane)
            return
        }
        await withCheckedContinuation { waiting.append((lane, $0)) }
    }

    /// Lets in, in order of arrival, every waiting test that can start now. A paired test may
    /// pass a real-time one waiting for the running pair to end: the set of tests is finite, so
    /// the real-time one still runs, and pairs form more often.
    func leave(_ lane: Lane) {
        switch lane {
        case .alone: aloneRunning = false
        case .paired: pairedRunning -= 1
        }
        var index = 0
        while index < waiting.count {
            if canStart(waiting[index].lane) {
                let entry = waiting.remove(at: index)
                start(entry.lane)
                entry.resume.resume()
            } else {
                index += 1
            }
        }
    }

    /// Runs `body` when no other test of the gate runs. With `MAJLIS_GATE_LOG` set, says how
    /// long each test held the gate.
    public static func exclusively<T: Sendable>(_ body: () async throws -> T, function: String = #function, file: String = #fileID) async throws -> T {
        try await through(.alone, body, function: function, file: file)
    }

    /// Runs `body` beside at most one other paired test, and never beside a real-time one.
    public static func inPairs<T: Sendable>(_ body: () async throws -> T, function: String = #function, file: String = #fileID) async throws -> T {
        try await through(.paired, body, function: function, file: file)
    }

    /// When the first test came to the gate (the log's times are counted from it).
    private static let opened = ContinuousClock.now

    private static func through<T: Sendable>(_ lane: Lane, _ body: () async throws -> T, function: String, file: String) async throws -> T {
        _ = opened
        await shared.enter(lane)
        let start = ContinuousClock.now
        defer {
            if ProcessInfo.processInfo.environment["MAJLIS_GATE_LOG"] != nil {
                let from = opened.duration(to: start).components.seconds
                print("real-time gate: \(file) \(function) held it \(start.duration(to: .now)) (\(lane == .alone ? "alone" : "paired") from +\(from) s)")
            }
        }
        do {
            let result = try await body()
            await shared.leave(lane)
            return result
        } catch {
            await shared.leave(lane)
            throw error
        }
    }
}
