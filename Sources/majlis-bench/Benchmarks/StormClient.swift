import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// One member of a join storm on a cluster: connects to the node it is given, says hello and
/// joins its room (creating it); refused with `conflict` naming another node, it connects there
/// and joins again, as the SDK does. Records how long the join took, from the first connection
/// to the snapshot, and how many nodes it was sent on to.
final class StormClient: WebSocketDelegate, @unchecked Sendable {
    // Audited: everything mutable is behind `state`; `loop`, `token`, `room` never change.
    struct State {
        var connection: WebSocketConnection?
        var joinedAfter: Double?
        var hops = 0
        var failed: String?
    }

    let user: String
    private let token: String
    private let room: String
    private let loop: WebSocketClient
    private let started = MonotonicClock.nanoseconds()
    private let state = Mutex(State())

    init(user: String, token: String, room: String, loop: WebSocketClient, url: String) throws {
        self.user = user
        self.token = token
        self.room = room
        self.loop = loop
        let connection = try loop.connect(url: url, delegate: self)
        state.withLock { $0.connection = connection }
    }

    /// Milliseconds from the first connection to the join's answer, once joined.
    var joinedAfter: Double? { state.withLock { $0.joinedAfter } }
    var hops: Int { state.withLock { $0.hops } }
    var failure: String? { state.withLock { $0.failed } }

    func close() { state.withLock { $0.connection }?.close(code: 1000, reason: "done") }

    func webSocketDidOpen(_ connection: WebSocketConnection) {
        connection.send(RequestEncoder.frame(id: 1, op: "hello", args: ["token": .string(token)]))
    }

    func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        guard message.starts(with: BenchClient.answerPrefix), let (re, ok) = BenchClient.answerHead(message) else { return }
        if ok {
            if re == 1 {
                connection.send(RequestEncoder.frame(id: 2, op: "room.join", args: ["room": .string(room), "create": ["title": "Storm"]]))
            } else if re == 2 {
                let after = Double(MonotonicClock.nanoseconds() - started) / 1e6
                state.withLock { $0.joinedAfter = after }
            }
            return
        }
        let answer = try? JSONDecoder().decode(JSONValue.self, from: message)
        guard re == 2, answer?["error"]?["code"] == "conflict", let next = answer?["error"]?["host"]?["signaling"]?.stringValue else {
            state.withLock { $0.failed = answer.map { "\($0)" } ?? "refused" }
            return
        }
        // The room is (or opens) on another node: go there.
        state.withLock { $0.hops += 1 }
        connection.close(code: 1000, reason: "moving to the room's node")
        do {
            let moved = try loop.connect(url: next, delegate: self)
            state.withLock { $0.connection = moved }
        } catch {
            state.withLock { $0.failed = "cannot connect to \(next): \(error)" }
        }
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        state.withLock { state in
            if state.connection === connection, state.joinedAfter == nil, state.failed == nil {
                state.failed = "closed \(code.map(String.init) ?? "-"): \(reason)"
            }
        }
    }
}
