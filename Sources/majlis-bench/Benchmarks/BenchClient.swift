import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport
import Synchronization

/// One benchmark connection: says hello, optionally joins a room, answers calls, and records
/// the arrival time of chat messages (whose text carries their send time).
final class BenchClient: WebSocketDelegate, @unchecked Sendable {
    // Audited: `connection` is set once right after creation; the rest is behind `state`.
    struct State {
        var signedIn = false
        var joined = false
        var failed: String?
        var answers: [Int64: UInt64] = [:]
        /// The request `call` waits for, and what it waits on.
        var waiter: (id: Int64, answered: DispatchSemaphore, keepsFrame: Bool)?
        var chatLatencies: [Double] = []
        var largestEvent = 0
        /// Answers to `request`, whole, by id.
        var frames: [Int64: Data] = [:]
    }

    static let sendTimeMarker = Array(#""text":"t="#.utf8)
    static let answerPrefix = Array(#"{"re":"#.utf8)
    let user: String
    let token: String
    let joinRoom: String?
    var connection: WebSocketConnection?
    private let state = Mutex(State())
    private let nextId = Atomic<Int64>(10)
    /// How many clients of this process have joined their room.
    static let joinedCount = Atomic<Int>(0)
    /// Bytes of every frame received, answers and events.
    let bytesReceived = Atomic<Int>(0)

    init(user: String, token: String, joinRoom: String? = nil) {
        self.user = user
        self.token = token
        self.joinRoom = joinRoom
    }

    var joined: Bool { state.withLock { $0.joined } }
    /// Whether its `hello` was answered yes.
    var signedIn: Bool { state.withLock { $0.signedIn } }
    /// Why the client failed (an error answer, or its connection closed), if it did.
    var failure: String? { state.withLock { $0.failed } }
    var chatCount: Int { state.withLock { $0.chatLatencies.count } }
    var chatLatencies: [Double] { state.withLock { $0.chatLatencies } }
    func resetChat() { state.withLock { $0.chatLatencies = [] } }
    /// The largest event (not an answer, not a chat message) heard since `resetLargestEvent()`,
    /// in bytes.
    var largestEvent: Int { state.withLock { $0.largestEvent } }
    func resetLargestEvent() { state.withLock { $0.largestEvent = 0 } }

    /// Sends request `id` without waiting for its answer; how many bytes the frame took.
    @discardableResult
    func send(id: Int64, _ op: String, _ args: [String: JSONValue]) -> Int {
        let frame = RequestEncoder.frame(id: id, op: op, args: args)
        connection?.send(frame)
        return frame.count
    }

    func webSocketDidOpen(_ connection: WebSocketConnection) {
        connection.send(RequestEncoder.frame(id: 1, op: "hello", args: ["token": .string(token)]))
    }

    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        let arrived = MonotonicClock.nanoseconds()
        bytesReceived.add(message.count, ordering: .relaxed)
        // Cheap checks first: most messages are events for everyone.
        if message.starts(with: Self.answerPrefix) {
            // The server writes an answer's head as `{"re":N,"ok":true,`: read that much, and
            // decode the whole frame only when it failed (a join's answer is a 20 KB snapshot, and
            // decoding it cost the crowd more than the server spent on the join).
            guard let (re, ok) = Self.answerHead(message) else { return }
            state.withLock { state in
                if !ok { state.failed = (try? JSONDecoder().decode(JSONValue.self, from: message)).map { "\($0)" } ?? String(decoding: message, as: UTF8.self) }
                switch re {
                case 1:
                    state.signedIn = ok
                    if ok, let room = joinRoom {
                        connection.send(RequestEncoder.frame(id: 2, op: "room.join", args: ["room": .string(room)]))
                    }
                case 2:
                    state.joined = ok
                    if ok { Self.joinedCount.add(1, ordering: .relaxed) }
                default:
                    state.answers[re] = arrived
                    if let waiter = state.waiter, waiter.id == re {
                        if waiter.keepsFrame { state.frames[re] = message }
                        waiter.answered.signal()
                    }
                }
            }
            return
        }
        // A chat message from the benchmark carries "t=<send time in ns>" in its text: find it
        // over the raw bytes, without decoding the frame (generic Data searching cost
        // more CPU than the server's whole fan-out, on the cores the two share).
        if let item = Self.number(after: Self.emojiMarker, in: message), let sent = Self.emojiSentAt.withLock({ $0[Int(item)] }) {
            state.withLock { $0.chatLatencies.append(Double(arrived - sent) / 1e6) }
            return
        }
        guard let sent = Self.sendTime(in: message) else {
            state.withLock { $0.largestEvent = max($0.largestEvent, message.count) }
            return
        }
        state.withLock { $0.chatLatencies.append(Double(arrived - sent) / 1e6) }
    }

    /// The `re` and `ok` of an answer that starts `{"re":N,"ok":true` or `...false`.
    static func answerHead(_ message: Data) -> (re: Int64, ok: Bool)? {
        message.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> (Int64, Bool)? in
            var position = answerPrefix.count
            var re: Int64 = 0
            var digits = 0
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9"), digits < 18 {
                re = re * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
                position += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
            let rest = UnsafeRawBufferPointer(rebasing: bytes[position...])
            if rest.starts(with: #","ok":true"#.utf8) { return (re, true) }
            if rest.starts(with: #","ok":false"#.utf8) { return (re, false) }
            return nil
        }
    }

    /// The number after `"text":"t=` in `message`, if there is one.
    static func sendTime(in message: Data) -> UInt64? {
        number(after: sendTimeMarker, in: message)
    }

    /// The seat emoji the benchmark sends name their message by item: `e<N>` for message N, sent
    /// at `emojiSentAt[N]` (monotonic ns).
    static let emojiMarker = Array(#""item":"e"#.utf8)
    static let emojiSentAt = Mutex<[Int: UInt64]>([:])

    /// The digits right after `marker` in `message`, as a number; nil without the marker.
    static func number(after marker: [UInt8], in message: Data) -> UInt64? {
        message.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> UInt64? in
            let last = bytes.count - marker.count
            guard last >= 0 else { return nil }
            var start = 0
            search: while start <= last {
                for offset in 0..<marker.count where bytes[start + offset] != marker[offset] {
                    start += 1
                    continue search
                }
                var index = start + marker.count
                var sent: UInt64 = 0
                while index < bytes.count, (48...57).contains(bytes[index]) {
                    sent = sent * 10 + UInt64(bytes[index] - 48)
                    index += 1
                }
                return sent
            }
            return nil
        }
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        state.withLock { state in
            state.failed = "closed \(code.map(String.init) ?? "-"): \(reason)"
            state.waiter?.answered.signal()
        }
    }

    func waitUntilSignedIn(timeout: Double = 10) throws {
        try Self.waitAll([self], timeout: timeout) { $0.state.withLock { $0.signedIn } }
    }

    /// Sends `op` with `args` and waits for the answer; returns the round trip in ms, from the
    /// send to the answer's arrival on the connection's thread. The caller sleeps until then
    /// (polling would take a core's share from the server it measures).
    func call(_ op: String, _ args: [String: JSONValue] = [:], timeout: Double = 30) throws -> Double {
        try exchange(op, args, timeout: timeout, keepingFrame: false).milliseconds
    }

    /// Sends `command` on `room`, as `call` does.
    func call(_ command: RoomCommand, room: String, timeout: Double = 30) throws -> Double {
        let (op, args) = try Self.encoded(command, room: room)
        return try call(op, args, timeout: timeout)
    }

    /// Sends `op` with `args` and waits for the answer; returns its `data`.
    func request(_ op: String, _ args: [String: JSONValue] = [:], timeout: Double = 30) throws -> JSONValue {
        let frame = try exchange(op, args, timeout: timeout, keepingFrame: true).frame
        guard let frame, let answer = try? JSONDecoder().decode(JSONValue.self, from: frame), let data = answer["data"] else {
            throw Arguments.Failure(description: "\(user): an answer without data")
        }
        return data
    }

    /// Sends `command` on `room`, as `request` does.
    func request(_ command: RoomCommand, room: String, timeout: Double = 30) throws -> JSONValue {
        let (op, args) = try Self.encoded(command, room: room)
        return try request(op, args, timeout: timeout)
    }

    private static func encoded(_ command: RoomCommand, room: String) throws -> (op: String, args: [String: JSONValue]) {
        guard let request = RequestEncoder.request(command, room: room) else { throw Arguments.Failure(description: "\(command) has no single request") }
        return request
    }

    private func exchange(_ op: String, _ args: [String: JSONValue], timeout: Double, keepingFrame: Bool) throws -> (milliseconds: Double, frame: Data?) {
        let id = nextId.add(1, ordering: .relaxed).newValue
        let answered = DispatchSemaphore(value: 0)
        state.withLock { $0.waiter = (id, answered, keepingFrame) }
        let message = RequestEncoder.frame(id: id, op: op, args: args)
        let start = MonotonicClock.nanoseconds()
        connection?.send(message)
        let outcome = answered.wait(timeout: .now() + timeout)
        let (arrived, frame, failure) = state.withLock { state in
            state.waiter = nil
            return (state.answers.removeValue(forKey: id), state.frames.removeValue(forKey: id), state.failed)
        }
        if let failure { throw Arguments.Failure(description: "\(user): \(failure)") }
        guard outcome == .success, let arrived else { throw Arguments.Failure(description: "\(user): no answer to request \(id)") }
        return (Double(arrived - start) / 1e6, frame)
    }

    /// Polls until every client satisfies `done`, or one failed, or the timeout passed.
    static func waitAll(_ clients: [BenchClient], timeout: Double, _ done: (BenchClient) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let failed = clients.first(where: { $0.failure != nil }) {
                throw Arguments.Failure(description: "\(failed.user): \(failed.failure ?? "")")
            }
            if clients.allSatisfy(done) { return }
            usleep(1000)
        }
        let missing = clients.filter { !done($0) }.count
        throw Arguments.Failure(description: "timed out: \(missing) of \(clients.count) clients not done")
    }
}
