import Foundation
import MajlisTransport
import Synchronization

/// The yardstick for `majlis bench signaling`: a WebSocket server with nothing of Majlis in it
/// but what every signaling server must do. It answers each request at once on its service
/// thread, and for a seat change or a chat message writes one event to every member who joined,
/// as Majlis does, with no rooms, rights, store or room threads. Majlis's latencies beside this
/// one's, measured on the same load in the same run, say what Majlis adds, on any machine.
public final class BareSignalingServer: Sendable {
    private let server: WebSocketServer
    private let members: Members

    /// Listens on a free loopback port. A seat event carries `seatEventBytes` bytes (as many as
    /// Majlis's for the same change); a chat event carries the message's text.
    public init(seatEventBytes: Int) throws {
        members = Members(seatEventBytes: seatEventBytes)
        server = try WebSocketServer(host: "127.0.0.1", port: 0, delegate: members, http: { $0.respond(HTTPResponse(status: 404, body: [])) })
    }

    public var url: String { "ws://127.0.0.1:\(server.port)/v1/signal" }

    /// The service thread's kernel id (0 before it runs).
    public var serviceThreadId: Int32 { server.serviceThreadId }

    public func stop() { server.stop() }

    /// From each request's arrival to the write of its answer and of each event it caused.
    public var writeDelays: (answers: DelayHistogram, events: DelayHistogram) { server.writeDelays }

    /// The connections, and what to say to them.
    private final class Members: WebSocketDelegate, Sendable {
        let joined = Mutex<[WebSocketConnection]>([])
        let seatEventBytes: Int
        let seq = Atomic<Int>(0)

        init(seatEventBytes: Int) { self.seatEventBytes = seatEventBytes }

        func webSocketDidOpen(_ connection: WebSocketConnection) {}

        func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
            joined.withLock { $0.removeAll { $0 === connection } }
        }

        func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
            let since = connection.messageReceivedAt
            guard let request = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
                let id = request["id"] as? Int, let op = request["op"] as? String
            else { return }
            connection.send(Data(#"{"re":\#(id),"ok":true,"data":{}}"#.utf8), since: since)
            let event: String
            switch op {
            case "room.join", "room.create":
                joined.withLock { $0.append(connection) }
                return
            case "seat.take", "seat.leave":
                let head = #"{"room":"bench","seq":\#(seq.add(1, ordering: .relaxed).newValue),"event":"seat.updated","data":{"pad":""#
                event = head + String(repeating: "x", count: max(0, seatEventBytes - head.utf8.count - 3)) + #""}}"#
            case "chat.send":
                let text = ((request["args"] as? [String: Any])?["text"] as? String) ?? ""
                let quoted = (try? JSONSerialization.data(withJSONObject: text, options: .fragmentsAllowed)).map { String(decoding: $0, as: UTF8.self) } ?? #""""#
                event = #"{"room":"bench","seq":\#(seq.add(1, ordering: .relaxed).newValue),"event":"chat.message","data":{"text":\#(quoted)}}"#
            default:
                return
            }
            WebSocketConnection.send(Data(event.utf8), to: joined.withLock { $0 }, urgent: false, since: since)
        }
    }
}
