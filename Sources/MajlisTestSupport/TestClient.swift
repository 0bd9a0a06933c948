import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// A raw protocol client for end-to-end tests: sends JSON frames, matches responses by id,
/// and collects events in arrival order. Waiting is bounded by a timeout so a broken server
/// fails the test instead of hanging it.
public final class TestClient: WebSocketDelegate, Sendable {
    /// Something the test waited for did not come.
    public struct Timeout: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private struct State {
        var opened = false
        var messages: [JSONValue] = []
        var closed: (code: UInt16?, reason: String)?
        /// Resumed with false ("look again") on every change.
        var waiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state = Mutex(State())
    private let nextId = Atomic<Int64>(100)
    /// Set once, right after the connection is made.
    private let socket = Mutex<WebSocketConnection?>(nil)
    private var connection: WebSocketConnection? { socket.withLock { $0 } }
    /// Default wait for responses and events, in seconds.
    public let timeout: Double

    private static let shared = Mutex<WebSocketClient?>(nil)

    /// One client thread serves every test client of the process.
    static func sharedClient() throws -> WebSocketClient {
        try shared.withLock { client in
            if let client { return client }
            let made = try WebSocketClient()
            client = made
            return made
        }
    }

    private init(timeout: Double) { self.timeout = timeout }

    /// Connects (without `hello`).
    public static func connect(_ url: String, timeout: Double = 30) async throws -> TestClient {
        let client = TestClient(timeout: timeout)
        let connection = try sharedClient().connect(url: url, delegate: client)
        client.socket.withLock { $0 = connection }
        try await client.wait("the connection to open") { $0.opened || $0.closed != nil }
        if let closed = client.state.withLock({ $0.closed }) {
            throw Timeout(description: "connection failed: \(closed.reason)")
        }
        return client
    }

    /// Connects and says `hello` with a token for `user`; fails unless the hello succeeds. With
    /// `via` it says it is a node's relay (its ops are not relayed to other nodes); with `device`,
    /// which of the user's devices it is.
    public static func signedIn(
        _ server: TestServer, user: String, grants: Grants = Grants(create: true), resume: String? = nil, device: String? = nil, via: String? = nil,
        token: String? = nil
    ) async throws -> TestClient {
        let client = try await connect(server.url)
        var args: [String: JSONValue] = ["token": .string(token ?? server.token(user, grants: grants))]
        if let resume { args["resume"] = .string(resume) }
        if let device { args["device"] = .string(device) }
        if let via { args["via"] = .string(via) }
        let answer = try await client.request("hello", args)
        guard answer["ok"] == true else { throw Timeout(description: "hello failed: \(answer)") }
        return client
    }

    // MARK: WebSocketDelegate

    public func webSocketDidOpen(_ connection: WebSocketConnection) {
        update { $0.opened = true }
    }

    public func webSocket(_ connection: WebSocketConnection, didReceive message: Data) {
        let value = (try? JSONDecoder().decode(JSONValue.self, from: message)) ?? .string(String(decoding: message, as: UTF8.self))
        update { $0.messages.append(value) }
    }

    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        update { $0.closed = (code, reason) }
    }

    private func update(_ change: (inout State) -> Void) {
        let waiters: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            change(&state)
            let all = Array(state.waiters.values)
            state.waiters = [:]
            return all
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// Waits until `condition` holds on the state (checked under the lock, once per change), or
    /// fails after the timeout.
    private func wait(_ what: String, timeout: Double? = nil, _ condition: @escaping (inout State) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout ?? self.timeout)
        while true {
            let id = UUID()
            let satisfied = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready = state.withLock { state -> Bool in
                    if condition(&state) { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready {
                    continuation.resume(returning: true)
                    return
                }
                // Wake up now and then to check the deadline.
                Task {
                    try? await Task.sleep(for: .milliseconds(50))
                    self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
                }
            }
            if satisfied { return }
            // A task woken late (the machine's few async threads all busy) looks once more
            // before it gives up: what came meanwhile counts.
            guard Date() < deadline else {
                if state.withLock({ condition(&$0) }) { return }
                throw Timeout(description: "timed out waiting for \(what)")
            }
        }
    }

    // MARK: Sending

    /// Sends raw text as one frame.
    public func sendRaw(_ text: String) {
        connection?.send(Data(text.utf8))
    }

    /// Sends a request and returns the whole response frame (`{"re", "ok", "data"|"error"}`).
    @discardableResult
    public func request(_ op: String, _ args: [String: JSONValue] = [:], rid: String? = nil) async throws -> JSONValue {
        try await response(to: send(op, args, rid: rid))
    }

    /// Sends request `op` without waiting for its answer; its id (for `response(to:)`).
    @discardableResult
    public func send(_ op: String, _ args: [String: JSONValue] = [:], rid: String? = nil) -> Int64 {
        let id = nextId.add(1, ordering: .relaxed).newValue
        sendRaw(String(decoding: RequestEncoder.frame(id: id, op: op, args: args, rid: rid), as: UTF8.self))
        return id
    }

    /// Waits for the response whose `re` is `id` and removes it from the inbox.
    public func response(to id: Int64?) async throws -> JSONValue {
        var found: JSONValue?
        let target: JSONValue = id.map { .int($0) } ?? .null
        try await wait("the response to \(id.map(String.init) ?? "null")") { state in
            if let index = state.messages.firstIndex(where: { $0["ev"] == nil && $0["re"] == target }) {
                found = state.messages.remove(at: index)
                return true
            }
            return state.closed != nil
        }
        guard let found else {
            let closed = state.withLock { $0.closed }
            throw Timeout(description: "connection closed (\(closed?.code.map(String.init) ?? "no code") \(closed?.reason ?? "")) before the response to \(id.map(String.init) ?? "null")")
        }
        return found
    }

    /// A room op: adds `room` to the args and returns `data`, or throws the protocol error.
    @discardableResult
    public func call(_ op: String, room: String, _ args: [String: JSONValue] = [:], rid: String? = nil) async throws -> JSONValue {
        var withRoom = args
        withRoom["room"] = .string(room)
        let answer = try await request(op, withRoom, rid: rid)
        if answer["ok"] == true { return answer["data"] ?? .null }
        let host = answer["error"]?["host"]?["node"]?.stringValue.map {
            ProtocolError.Host(node: $0, signaling: answer["error"]?["host"]?["signaling"]?.stringValue)
        }
        throw ProtocolError(
            ErrorCode(rawValue: answer["error"]?["code"]?.stringValue ?? "") ?? .internal,
            answer["error"]?["message"]?.stringValue ?? "\(answer)", host: host)
    }

    /// Waits for the first event named `name` (that `matching` accepts) and removes it from the
    /// inbox; earlier events stay.
    @discardableResult
    public func event(_ name: String, timeout: Double? = nil, matching: @escaping @Sendable (JSONValue) -> Bool = { _ in true }) async throws -> JSONValue {
        var found: JSONValue?
        try await wait("event \(name)", timeout: timeout) { state in
            if let index = state.messages.firstIndex(where: { $0["ev"]?.stringValue == name && matching($0) }) {
                found = state.messages.remove(at: index)
                return true
            }
            return state.closed != nil
        }
        guard let found else { throw Timeout(description: "connection closed before event \(name)") }
        return found
    }

    /// Events received so far and not yet taken, in order.
    public var pendingEvents: [JSONValue] { state.withLock { $0.messages.filter { $0["ev"] != nil } } }

    /// Waits for the connection to close; returns the close code.
    public func closed(timeout: Double? = nil) async throws -> UInt16? {
        try await wait("the connection to close", timeout: timeout) { $0.closed != nil }
        return state.withLock { $0.closed?.code }
    }

    /// How the connection closed (code and reason), once it has.
    public var closing: (code: UInt16?, reason: String)? { state.withLock { $0.closed } }

    /// Whether the connection has closed.
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Closes the connection without `bye` (as a network drop would, from the server's view).
    public func disconnect() {
        connection?.close(code: 1000, reason: "test disconnect")
    }
}
