import Foundation
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

    /// Runs `body` when no other real-time test runs. With `MAJLIS_GATE_LOG` set, says how long
    /// each test held the gate (their sum is the least the suite can take).
    public static func exclusively<T: Sendable>(_ body: () async throws -> T, function: String = #function, file: String = #fileID) async throws -> T {
        await shared.enter()
        let start = ContinuousClock.now
        defer {
            if ProcessInfo.processInfo.environment["MAJLIS_GATE_LOG"] != nil {
                print("real-time gate: \(file) \(function) held it \(start.duration(to: .now))")
            }
        }
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
