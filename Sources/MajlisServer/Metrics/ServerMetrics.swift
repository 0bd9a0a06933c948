import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// What the server counts beyond what its parts keep themselves: ops by name and result with
/// their latency, and events worth a counter. Any thread; each recording takes one short lock.
final class ServerMetrics: Sendable {
    private struct Op {
        var results: [String: Int] = [:]
        /// From a request's arrival to its answer being handed to its connection.
        var latency = DelayHistogram()
    }

    /// Things counted by name (`chat_messages`, `logins_rejected`, ...).
    enum Counter: String, CaseIterable, Sendable {
        case chatMessages = "chat_messages"
        case conversationMessages = "conversation_messages"
        case loginsRejected = "logins_rejected"
        case kicks
        case bans
        case apiRequests = "api_requests"
        case webhookAttemptsFailed = "webhook_attempts_failed"
        case webhooksGivenUp = "webhooks_given_up"
        /// Events a change caused that could not be written to the outbox (the store failed).
        case webhooksLost = "webhooks_lost"
    }

    private let ops = Mutex<[String: Op]>([:])
    private let counters = Mutex<[Counter: Int]>([:])
    private let webhookDelays = Mutex(DelayHistogram())
    private let queueWaits = Mutex(DelayHistogram())

    /// An op answered: `result` is `ok` or the error code.
    func recordOp(_ op: String, result: String, since start: UInt64) {
        let microseconds = MonotonicClock.microseconds(since: start)
        ops.withLock { ops in
            ops[op, default: Op()].results[result, default: 0] += 1
            ops[op, default: Op()].latency.record(microseconds: microseconds)
        }
    }

    /// The result label of an answer: `ok`, or the code in an encoded error.
    static func result(ok: Bool, body: Data) -> String {
        ok ? "ok" : ((try? JSONDecoder().decode(ProtocolError.self, from: body))?.code.rawValue ?? "internal")
    }

    func count(_ counter: Counter, by amount: Int = 1) {
        counters.withLock { $0[counter, default: 0] += amount }
    }

    /// A webhook delivered, `milliseconds` after its event happened.
    func webhookDelivered(afterMilliseconds milliseconds: Int64) {
        webhookDelays.withLock { $0.record(microseconds: Int(max(0, milliseconds)) * 1000) }
    }

    /// A request's work began on its room's queue; it arrived at `start` (monotonic ns).
    func reachedRoomQueue(since start: UInt64) {
        let microseconds = MonotonicClock.microseconds(since: start)
        queueWaits.withLock { $0.record(microseconds: microseconds) }
    }

    /// From requests' arrival to the start of their work on their room's queue, since the start.
    var roomQueueWaits: DelayHistogram { queueWaits.withLock { $0 } }

    /// From events to their delivery, since the start.
    var webhookDelivery: DelayHistogram { webhookDelays.withLock { $0 } }

    /// Op results by op, and op latencies by op.
    var opResults: [String: [String: Int]] { ops.withLock { $0.mapValues(\.results) } }
    var opLatencies: [String: DelayHistogram] { ops.withLock { $0.mapValues(\.latency) } }
    var counted: [Counter: Int] { counters.withLock { $0 } }
}
