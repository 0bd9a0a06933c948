import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTransport
import Synchronization

/// A real HTTP endpoint on loopback that receives webhooks and can misbehave on cue: answer an
/// error status, hang (answer nothing until told), or be down (its port refusing connections).
public final class WebhookReceiver: Sendable {
    public enum Mode: Sendable, Equatable {
        case accept
        case fail(UInt32)
        /// Holds every post unanswered; `mode = .accept` answers the held ones 200, late.
        case hang
    }

    /// One post as it arrived.
    public struct Post: Sendable {
        public var body: JSONValue
        public var id: String
        public var signatureValid: Bool
        /// The body as sent, and the `Majlis-Signature` header.
        public var raw: String
        public var signature: String
        /// What the receiver answered (0: held).
        public var status: UInt32
    }

    private struct State {
        var mode = Mode.accept
        var posts: [Post] = []
        var held: [HTTPExchange] = []
        var server: WebSocketServer?
    }

    private let state = Mutex(State())
    private let secret: String
    public let port: Int

    /// Listens on an ephemeral loopback port; posts are checked against `secret`.
    public init(secret: String, port: Int = 0) throws {
        self.secret = secret
        let box = Handoff()
        let server = try WebSocketServer(host: "127.0.0.1", port: port, delegate: nil, http: { box.deliver($0) })
        self.port = server.port
        handOff = box
        box.receiver.withLock { $0 = self }
        state.withLock { $0.server = server }
    }

    /// Reaches this receiver from the servers' handlers (cleared by `stop`).
    private let handOff: Handoff

    private final class Handoff: Sendable {
        let receiver = Mutex<WebhookReceiver?>(nil)
        func deliver(_ exchange: HTTPExchange) {
            guard let receiver = receiver.withLock({ $0 }) else { return exchange.respond(HTTPResponse(status: 503, body: [])) }
            receiver.handle(exchange)
        }
    }

    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    public var mode: Mode {
        get { state.withLock { $0.mode } }
        set {
            let held: [HTTPExchange] = state.withLock { state in
                state.mode = newValue
                guard newValue == .accept else { return [] }
                defer { state.held = [] }
                return state.held
            }
            for exchange in held { exchange.respond(HTTPResponse(status: 200, body: Array("{}".utf8))) }
        }
    }

    /// Every post so far, in the order they arrived (retries included).
    public var posts: [Post] { state.withLock { $0.posts } }

    /// Each event once (the first post of each id), in the order they first arrived.
    public var events: [JSONValue] {
        var seen = Set<String>()
        return posts.filter { seen.insert($0.id).inserted }.map(\.body)
    }

    /// Stops listening (connections are refused) until `up()`.
    public func down() {
        let server = state.withLock { state in defer { state.server = nil }; return state.server }
        server?.stop()
    }

    /// Listens again on the same port.
    public func up() throws {
        let box = handOff
        let server = try WebSocketServer(host: "127.0.0.1", port: port, delegate: nil, http: { box.deliver($0) })
        state.withLock { $0.server = server }
    }

    public func stop() {
        handOff.receiver.withLock { $0 = nil }
        down()
    }

    private func handle(_ exchange: HTTPExchange) {
        let request = exchange.request
        let body = String(decoding: request.body, as: UTF8.self)
        let valid = WebhookSignature.verify(
            header: request.headers["majlis-signature"] ?? "", body: body, secret: secret, now: SystemClock().now() / 1000)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(request.body))) ?? .null
        let answer: UInt32? = state.withLock { state in
            let status: UInt32? = switch state.mode {
            case .accept: 200
            case .fail(let code): code
            case .hang: nil
            }
            state.posts.append(
                Post(
                    body: json, id: request.headers["majlis-event-id"] ?? "", signatureValid: valid, raw: body,
                    signature: request.headers["majlis-signature"] ?? "", status: status ?? 0))
            if status == nil { state.held.append(exchange) }
            return status
        }
        if let answer { exchange.respond(HTTPResponse(status: answer, body: Array("{}".utf8))) }
    }
}
