import Foundation
import MajlisProtocol

/// What a signaling client decides, without sockets, tasks or a clock of its own: the value core
/// of `LiveSignalingClient`, which opens and closes the connections, carries the frames, wakes
/// it at `nextDeadline` and hands each caller its outcome. Every input takes `now` (Unix ms) and
/// returns the actions to carry out, in order.
///
/// - Requests wait while the client connects; each try waits `requestTimeout` for its answer,
///   and a timed-out request is sent again with the same `rid` (a retry never doubles a chat
///   message or a seat change), `maxTries` tries in all. A request whose connection dropped is
///   sent again once reconnected, until `reconnectFor` has passed.
/// - Once open it pings every half heartbeat; two unanswered pings count as a dead connection.
/// - A dropped connection is opened again after the backoff's delays (within 50 ms when the
///   server closed with 1001, going away), saying `hello` with `resume`. Where the server is a
///   node of a cluster, its `hello` and `ping` answers name the live nodes: an attempt that fails
///   goes to the next node at once, and each round of the backoff goes through them all.
///   `move(to:)` takes the session to the node a room is on.
/// - Close codes 4001 (token), 4003 (kicked) and 4004 (replaced) end the session.
public struct SignalingClientCore: Sendable {
    /// One request until it is answered or given up.
    private struct Request {
        var ticket: Ticket
        var op: String
        var args: [String: JSONValue]
        var rid: String?
        var tries = 0
        /// Past this, a request whose connection dropped is not sent again.
        var giveUp: Int64
        /// The frame id and deadline of the try in flight; nil while it waits for a connection.
        var inFlight: Exchange?
    }

    /// A frame in flight that is not a caller's request (`hello`, `ping`, `bye`).
    private struct Exchange {
        var id: Int64
        var deadline: Int64
    }

    private struct Reconnect {
        var started: Int64
        var round: Int
        /// Nodes tried this round without waiting.
        var tried = 0
        var attempt = 0
        /// When the next attempt opens; nil while one is under way.
        var at: Int64?
    }

    public let options: Options
    public private(set) var phase = Phase.idle
    /// Where the next connection goes.
    public private(set) var url: String
    /// The nodes to try when it cannot: the first URL given, then those the cluster named.
    public private(set) var candidates: [String]
    /// The session of the current (or last) connection.
    public private(set) var session: SessionInfo?
    /// Why the client closed (or the last connection attempt failed, where that says more).
    public private(set) var closeInfo: CloseInfo?
    /// The access token the next `hello` carries (and uploads send).
    public private(set) var token: String
    private var connection: Connection?
    private var connections = 0
    private var nextId: Int64 = 0
    private var hello: Exchange?
    private var connectTicket: Ticket?
    private var moveTickets: [Ticket] = []
    private var requests: [Request] = []
    private var ping: Exchange?
    private var nextPing: Int64?
    private var pingInterval: Int64 = 10_000
    private var missedPings = 0
    private var reconnect: Reconnect?
    private var bye: Exchange?
    private var byeTickets: [Ticket] = []
    private var random: SplitMix64
    private var out: [Action] = []

    public init(url: String, token: String, options: Options = Options(), seed: UInt64 = .random(in: 0...UInt64.max)) {
        self.url = url
        self.token = token
        self.options = options
        candidates = [url]
        random = SplitMix64(seed: seed)
    }

    /// When `tick` has something to do next.
    public var nextDeadline: Int64? {
        var deadlines = requests.compactMap { $0.inFlight?.deadline }
        for deadline in [hello?.deadline, bye?.deadline, ping?.deadline, phase == .open && ping == nil ? nextPing : nil, reconnect?.at] {
            if let deadline { deadlines.append(deadline) }
        }
        return deadlines.min()
    }

    public static func isFinal(_ code: UInt16) -> Bool { [CloseCode.unauthorized, .kicked, .replaced].contains { $0.rawValue == code } }

    // MARK: Inputs

    /// Opens the first connection and says `hello`; `ticket` gets the session or the failure.
    public mutating func connect(_ ticket: Ticket, now: Int64) -> [Action] {
        guard phase == .idle || phase == .closed, bye == nil else {
            out.append(.resolve(ticket, .failure(.misuse("connect() called twice"))))
            return take()
        }
        phase = .connecting
        closeInfo = nil
        connectTicket = ticket
        open(now: now)
        return take()
    }

    /// A request; `ticket` gets its answer's data or the failure.
    public mutating func request(_ ticket: Ticket, op: String, args: [String: JSONValue], rid: String?, now: Int64) -> [Action] {
        switch phase {
        case .idle, .closed:
            out.append(.resolve(ticket, .failure(closedError)))
        case .connecting, .reconnecting:
            requests.append(Request(ticket: ticket, op: op, args: args, rid: rid, giveUp: now + options.reconnectFor))
        case .open:
            requests.append(Request(ticket: ticket, op: op, args: args, rid: rid, giveUp: now + options.reconnectFor))
            send(requests.count - 1, now: now)
        }
        return take()
    }

    /// The token the next `hello` (and `session.renew`) carries.
    public mutating func renew(token: String) {
        self.token = token
    }

    /// Takes the session to `target` (a node of the cluster), falling back to the others as a
    /// reconnect does; `ticket` gets where it is connected then.
    public mutating func move(_ ticket: Ticket, to target: String, now: Int64) -> [Action] {
        guard phase == .open || phase == .reconnecting || phase == .connecting else {
            out.append(.resolve(ticket, .failure(.notConnected)))
            return take()
        }
        if url == target && phase == .open {
            out.append(.resolve(ticket, .moved(url)))
            return take()
        }
        url = target
        candidates.removeAll { $0 == target }
        candidates.insert(target, at: 0)
        moveTickets.append(ticket)
        if phase == .open, let current = connection {
            log(.info, "moving to \(target)")
            out.append(.close(current, code: 1000, reason: "moving to another node"))
            connection = nil
            drop(reason: "moving to \(target)", firstDelay: 0, now: now)
        }
        return take()
    }

    /// Says `bye` (when open), then closes for good; `ticket` is told when done.
    public mutating func disconnect(_ ticket: Ticket, now: Int64) -> [Action] {
        byeTickets.append(ticket)
        guard bye == nil else { return take() }
        let wasOpen = phase == .open
        phase = .closed
        closeInfo = CloseInfo(code: 1000, reason: "bye")
        reconnect = nil
        hello = nil
        stopPinging()
        failWaiters(with: .closed(code: 1000, reason: "bye"))
        if wasOpen, let connection {
            nextId += 1
            bye = Exchange(id: nextId, deadline: now + options.requestTimeout)
            out.append(.send(connection, RequestEncoder.frame(id: nextId, op: "bye")))
        } else {
            byeDone()
        }
        return take()
    }

    /// A message on `which`.
    public mutating func received(_ message: Data, on which: Connection, now: Int64) -> [Action] {
        guard which == connection else { return [] }
        switch ServerFrame(parsing: message) {
        case nil:
            log(.warning, "unreadable frame from the server")
        case .event(let name, let value)?:
            if let event = try? JSONValueDecoder().decode(EventFrame.self, from: value) {
                out.append(.emit(.event(event)))
            } else {
                log(.warning, "unreadable event \(name)")
            }
        case .answer(let re, let result)?:
            answered(re, result, now: now)
        }
        return take()
    }

    /// `which` closed, or never opened: `code` and `reason` as the WebSocket says,
    /// `certificateProblem` when the client refused the server's certificate.
    public mutating func closed(_ which: Connection, code: UInt16?, reason: String, certificateProblem: String? = nil, now: Int64) -> [Action] {
        guard which == connection else { return [] }
        connection = nil
        if let code, Self.isFinal(code) {
            closeInfo = CloseInfo(code: code, reason: reason)
        } else if code == nil, let certificateProblem {
            closeInfo = CloseInfo(code: nil, reason: "the server's certificate is not trusted (\(certificateProblem))")
        } else if code == nil, reason.hasPrefix("HS:") {
            // A server answered the HTTP request, but not with a WebSocket: a wrong path or not Majlis.
            closeInfo = CloseInfo(code: nil, reason: "the server answered but is not Majlis signaling at this address (\(reason)); the path is /v1/signal")
        }
        if hello != nil {
            helloFailed(closedError, now: now)
        } else if bye != nil {
            byeDone()
        } else if phase == .open {
            if let code, Self.isFinal(code) {
                finish(code: code, reason: reason)
            } else {
                log(.info, "connection lost (\(reason)); reconnecting")
                // A server that says it goes away (it stops, or its node hands the room to
                // another) is left at once, for another node or for it to send the room on:
                // within 50 ms, so a whole room does not arrive in the same instant.
                let firstDelay = code == CloseCode.goingAway.rawValue ? Int64.random(in: 0...50, using: &random) : nil
                drop(reason: reason, firstDelay: firstDelay, now: now)
            }
        }
        return take()
    }

    /// The host could not even start to open `which`.
    public mutating func openFailed(_ which: Connection, error: MajlisError, now: Int64) -> [Action] {
        guard which == connection, hello != nil else { return [] }
        connection = nil
        helloFailed(error, now: now)
        return take()
    }

    /// Whatever is due by `now`: timeouts, the heartbeat, the next reconnect attempt.
    public mutating func tick(now: Int64) -> [Action] {
        if let hello, hello.deadline <= now {
            closeCurrent(code: 1000, reason: "hello timed out")
            helloFailed(.timedOut(op: "hello"), now: now)
        }
        if let bye, bye.deadline <= now { byeDone() }
        if let ping, ping.deadline <= now {
            self.ping = nil
            missedPings += 1
            if missedPings >= 2 {
                log(.info, "no answer to two pings: the connection is dead")
                closeCurrent(code: 1001, reason: "heartbeat")
                drop(reason: "heartbeat lost", firstDelay: nil, now: now)
            } else {
                nextPing = now + pingInterval
            }
        }
        if phase == .open, ping == nil, let at = nextPing, at <= now, let connection {
            nextId += 1
            ping = Exchange(id: nextId, deadline: now + pingInterval)
            nextPing = nil
            out.append(.send(connection, RequestEncoder.frame(id: nextId, op: "ping")))
        }
        var index = 0
        while index < requests.count {
            if let flight = requests[index].inFlight, flight.deadline <= now {
                requests[index].inFlight = nil
                requests[index].tries += 1
                let request = requests[index]
                log(.debug, "\(request.op): no answer (try \(request.tries) of \(options.maxTries))")
                if request.tries >= options.maxTries {
                    requests.remove(at: index)
                    out.append(.resolve(request.ticket, .failure(.timedOut(op: request.op))))
                    continue
                }
                if phase == .open { send(index, now: now) }
            }
            index += 1
        }
        if phase == .reconnecting, connection == nil, var due = reconnect, let at = due.at, at <= now {
            due.at = nil
            due.attempt += 1
            reconnect = due
            open(now: now)
        }
        return take()
    }

    // MARK: Steps

    private mutating func take() -> [Action] {
        defer { out = [] }
        return out
    }

    private mutating func log(_ level: LogLevel, _ text: String) {
        out.append(.log(level, text))
    }

    private var closedError: MajlisError {
        closeInfo.map { .closed(code: $0.code, reason: $0.reason) } ?? .notConnected
    }

    /// A new connection to `url`, its `hello` queued behind the handshake.
    private mutating func open(now: Int64) {
        connections += 1
        connection = connections
        nextId += 1
        hello = Exchange(id: nextId, deadline: now + options.requestTimeout * 2)
        var args: [String: JSONValue] = ["token": .string(token)]
        // A session of another node is not resumed there: it answers with a new one.
        if let resume = session?.session { args["resume"] = .string(resume) }
        if let device = options.device { args["device"] = .string(device) }
        if let client = try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(options.client)) { args["client"] = client }
        out.append(.open(connections, url: url))
        out.append(.send(connections, RequestEncoder.frame(id: nextId, op: "hello", args: args)))
    }

    private mutating func closeCurrent(code: UInt16, reason: String) {
        guard let current = connection else { return }
        out.append(.close(current, code: code, reason: reason))
        connection = nil
    }

    private mutating func send(_ index: Int, now: Int64) {
        guard let connection else { return }
        nextId += 1
        requests[index].inFlight = Exchange(id: nextId, deadline: now + options.requestTimeout)
        let request = requests[index]
        out.append(.send(connection, RequestEncoder.frame(id: nextId, op: request.op, args: request.args, rid: request.rid)))
    }

    private mutating func answered(_ re: Int64, _ result: Result<JSONValue, ProtocolError>, now: Int64) {
        if hello?.id == re {
            hello = nil
            helloAnswered(result, now: now)
        } else if ping?.id == re {
            ping = nil
            nextPing = now + pingInterval
            // A cluster's answer lists its live nodes: the ones that joined since `hello` too.
            if case .success(let pong) = result {
                missedPings = 0
                learn(pong["nodes"]?.arrayValue?.compactMap { $0["signaling"]?.stringValue } ?? [])
            }
        } else if bye?.id == re {
            byeDone()
        } else if let index = requests.firstIndex(where: { $0.inFlight?.id == re }) {
            let request = requests.remove(at: index)
            switch result {
            case .success(let data): out.append(.resolve(request.ticket, .data(data)))
            case .failure(let error): out.append(.resolve(request.ticket, .failure(.server(error))))
            }
        }
        // Otherwise the answer to a try already given up on: its retry is in flight.
    }

    private mutating func learn(_ nodes: [String]) {
        for node in nodes where !candidates.contains(node) { candidates.append(node) }
    }

    private mutating func helloAnswered(_ result: Result<JSONValue, ProtocolError>, now: Int64) {
        let info: SessionInfo
        switch result {
        case .success(let data):
            guard let read = SessionInfo(hello: data) else {
                closeCurrent(code: 1000, reason: "bad hello answer")
                return helloFailed(.invalidResponse("hello: \(data)"), now: now)
            }
            info = read
        case .failure(let error):
            closeCurrent(code: 1000, reason: "hello refused")
            return helloFailed(.server(error), now: now)
        }
        let reconnected = phase == .reconnecting
        session = info
        learn(info.nodes)
        phase = .open
        reconnect = nil
        missedPings = 0
        pingInterval = Int64(max(1, info.heartbeat)) * 1000 / 2
        nextPing = now + pingInterval
        log(.info, "\(reconnected ? "reconnected" : "connected") to \(url) as \(info.userId), session \(info.session)\(info.resumed ? " (rooms kept)" : "")")
        out.append(.emit(reconnected ? .reconnected(info) : .connected(info)))
        if let connectTicket { out.append(.resolve(connectTicket, .session(info))) }
        connectTicket = nil
        for ticket in moveTickets { out.append(.resolve(ticket, .moved(url))) }
        moveTickets = []
        for index in requests.indices where requests[index].inFlight == nil { send(index, now: now) }
    }

    /// The connection being opened failed before its `hello` was answered.
    private mutating func helloFailed(_ error: MajlisError, now: Int64) {
        hello = nil
        connection = nil
        switch phase {
        case .connecting:
            // The first connection: the caller hears why, and nothing is retried.
            phase = .closed
            if let connectTicket { out.append(.resolve(connectTicket, .failure(error))) }
            connectTicket = nil
            failWaiters(with: error)
            failRequests(with: error)
        case .reconnecting:
            guard var due = reconnect else { return }
            log(.info, "reconnect attempt \(due.attempt) (\(url)) failed: \(error)")
            // The next node of the cluster, at once, until every one was tried this round.
            if let index = candidates.firstIndex(of: url), candidates.count > 1 {
                url = candidates[(index + 1) % candidates.count]
                due.tried = (due.tried + 1) % candidates.count
            } else {
                due.tried = 0
            }
            if case .closed(let code?, let reason) = error, Self.isFinal(code) {
                return finish(code: code, reason: reason)
            }
            if case .server = error {
                return finish(code: CloseCode.unauthorized.rawValue, reason: "\(error)")
            }
            if now - due.started > options.reconnectFor {
                return finish(code: nil, reason: "could not reconnect")
            }
            if due.tried != 0 {
                due.at = now
            } else {
                due.at = now + options.backoff[min(due.round, options.backoff.count - 1)]
                due.round += 1
            }
            reconnect = due
        case .idle, .open, .closed:
            break
        }
    }

    /// The open connection is gone (already closed): tell, and reconnect after `firstDelay`
    /// (the backoff's first delay when nil). Requests in flight wait to be sent again.
    private mutating func drop(reason: String, firstDelay: Int64?, now: Int64) {
        phase = .reconnecting
        stopPinging()
        var index = 0
        while index < requests.count {
            if requests[index].inFlight != nil, now > requests[index].giveUp {
                let request = requests.remove(at: index)
                out.append(.resolve(request.ticket, .failure(.timedOut(op: request.op))))
                continue
            }
            requests[index].inFlight = nil
            index += 1
        }
        out.append(.emit(.connectionLost(reason: reason)))
        reconnect = Reconnect(started: now, round: 1, at: now + (firstDelay ?? options.backoff[0]))
    }

    private mutating func stopPinging() {
        ping = nil
        nextPing = nil
    }

    private mutating func failWaiters(with error: MajlisError) {
        if let connectTicket { out.append(.resolve(connectTicket, .failure(error))) }
        connectTicket = nil
        for ticket in moveTickets { out.append(.resolve(ticket, .failure(error))) }
        moveTickets = []
    }

    private mutating func failRequests(with error: MajlisError) {
        for request in requests { out.append(.resolve(request.ticket, .failure(error))) }
        requests = []
    }

    /// Closed for good by the server, or the reconnect gave up.
    private mutating func finish(code: UInt16?, reason: String) {
        phase = .closed
        closeInfo = CloseInfo(code: code, reason: reason)
        reconnect = nil
        hello = nil
        stopPinging()
        closeCurrent(code: 1000, reason: reason)
        let error = MajlisError.closed(code: code, reason: reason)
        failWaiters(with: error)
        failRequests(with: error)
        out.append(.emit(.closed(code: code, reason: reason)))
        out.append(.finish)
    }

    /// `bye` was answered, timed out or lost: close, and tell everyone still waiting.
    private mutating func byeDone() {
        bye = nil
        closeCurrent(code: 1000, reason: "bye")
        failRequests(with: .closed(code: 1000, reason: "bye"))
        out.append(.emit(.closed(code: 1000, reason: "bye")))
        out.append(.finish)
        for ticket in byeTickets { out.append(.resolve(ticket, .done)) }
        byeTickets = []
    }
}
