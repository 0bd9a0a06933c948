import MajlisProtocol
import Testing

@testable import MajlisServer

/// Where each request goes, decided from the request and the session's state alone: no
/// sockets, no rooms, no other node (`RequestRouter`).
struct RequestRouterTests {
    static let router = RequestRouter(roomsPerConnection: 2, roomsPerUser: 5)
    static let limits = SessionState.Limits(
        requestsPerSecond: 10, requestBurst: 5, chatPerSecond: 1, chatBurst: 2, offersPerSecond: 0.5, offerBurst: 1, helloTimeout: 10,
        heartbeat: 20)

    /// A session greeted as `user` with `grants`, its token for `room` (nil: any).
    static func greeted(_ user: String = "huda", grants: Grants = Grants(), room: String? = nil) throws -> SessionState {
        var state = SessionState(openedAt: 0, limits: limits)
        try state.greet(AccessClaims(sub: user, exp: 3_600, room: room, grants: grants), id: "s1")
        return state
    }

    static func route(
        _ command: ClientCommand, _ state: inout SessionState, rooms: Set<String> = [], relayed: [String: String] = [:], now: Int64 = 0
    ) -> Route {
        router.route(IncomingRequest(id: 1, op: "op", rid: nil, command: command), state: &state, now: now, rooms: { rooms }, relayedTo: { relayed[$0] })
    }

    static let settings = RoomSettings(title: "t")
    static let draft = ChatDraft(text: "hi", clientMsgId: "c1")

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var command: ClientCommand
        var grants = Grants()
        var tokenRoom: String?
        var rooms: Set<String> = []
        var relayed: [String: String] = [:]
        var expected: Route
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "ping", command: .ping, expected: .session(.ping)),
        Row(name: "renew", command: .renew(token: "t2"), expected: .session(.renew(token: "t2"))),
        Row(name: "bye", command: .bye, expected: .session(.bye)),
        Row(name: "a second hello", command: .hello(HelloArgs(token: "t")), expected: .refuse(ProtocolError(.badRequest, "hello was already sent on this connection"))),
        Row(name: "echo test", command: .echoStart(delay: 400), expected: .precall(.echoStart(delay: 400, sdp: nil))),
        Row(name: "probe", command: .probeStart(up: 64_000, down: 96_000), expected: .precall(.probeStart(up: 64_000, down: 96_000))),
        Row(name: "probe result", command: .probeResult, expected: .precall(.probeResult)),
        Row(
            name: "a seat op", command: .room("r1", .takeSeat(index: 2)),
            expected: .room(RoomRoute(room: "r1", command: .takeSeat(index: 2), creation: nil, placing: false))),
        Row(
            name: "create becomes a join that creates, placed", command: .room("r1", .create(settings)), grants: Grants(create: true),
            expected: .room(RoomRoute(
                room: "r1", command: .join(create: nil),
                creation: .init(settings: settings, owner: "huda", ownedLimit: 5, mustBeNew: true, allowed: true), placing: true))),
        Row(
            name: "an admin's rooms are not counted", command: .room("r1", .create(settings)), grants: Grants(create: true, admin: true),
            expected: .room(RoomRoute(
                room: "r1", command: .join(create: nil),
                creation: .init(settings: settings, owner: "huda", ownedLimit: nil, mustBeNew: true, allowed: true), placing: true))),
        Row(
            name: "join with create, without the create grant", command: .room("r1", .join(create: settings)),
            expected: .room(RoomRoute(
                room: "r1", command: .join(create: settings),
                creation: .init(settings: settings, owner: "huda", ownedLimit: 5, mustBeNew: false, allowed: false), placing: true))),
        Row(
            name: "create without the grant", command: .room("r1", .create(settings)),
            expected: .refuse(ProtocolError(.forbidden, "your token does not grant create"))),
        Row(
            name: "join without the grant", command: .room("r1", .join(create: nil)), grants: Grants(join: false),
            expected: .refuse(ProtocolError(.forbidden, "your token does not grant join"))),
        Row(
            name: "a token for another room", command: .room("r2", .sync), tokenRoom: "r1",
            expected: .refuse(ProtocolError(.forbidden, "your token is for room r1"))),
        Row(
            name: "a third room", command: .room("r3", .join(create: nil)), rooms: ["r1", "r2"],
            expected: .refuse(ProtocolError(.forbidden, "you are in 2 rooms, the most one user may be in at once; leave one first"))),
        Row(
            name: "joining a room the user is in again", command: .room("r2", .join(create: nil)), rooms: ["r1", "r2"],
            expected: .room(RoomRoute(room: "r2", command: .join(create: nil), creation: nil, placing: true))),
        Row(
            name: "a room on another node", command: .room("r1", .sendChat(draft)), relayed: ["r1": "n2"],
            expected: .relay(RoomRoute(room: "r1", command: .sendChat(draft), creation: nil, placing: false), node: "n2")),
        Row(
            name: "a join of a room on another node", command: .room("r1", .join(create: nil)), relayed: ["r1": "n2"],
            expected: .relay(RoomRoute(room: "r1", command: .join(create: nil), creation: nil, placing: true), node: "n2")),
        Row(
            name: "refused here before it is relayed", command: .room("r1", .create(settings)), relayed: ["r1": "n2"],
            expected: .refuse(ProtocolError(.forbidden, "your token does not grant create"))),
    ]

    @Test(arguments: rows) func routes(_ row: Row) throws {
        var state = try Self.greeted(grants: row.grants, room: row.tokenRoom)
        #expect(Self.route(row.command, &state, rooms: row.rooms, relayed: row.relayed) == row.expected)
    }

    /// Before `hello` only `hello` is taken: anything else closes the connection.
    @Test func beforeHelloOnlyHello() {
        var state = SessionState(openedAt: 0, limits: Self.limits)
        let hello = HelloArgs(token: "t")
        #expect(Self.route(.hello(hello), &state) == .hello(hello))
        for command: ClientCommand in [.ping, .bye, .probeResult, .room("r1", .sync)] {
            #expect(Self.route(command, &state) == .reject(ProtocolError(.unauthorized, "the first request must be hello")))
        }
    }

    /// Chat spends the session's chat tokens (2 at once, then 1 a second), across rooms.
    @Test func chatSpendsTheSessionsTokens() throws {
        var state = try Self.greeted()
        let chat = ClientCommand.room("r1", .sendChat(Self.draft))
        let elsewhere = ClientCommand.room("r2", .sendChat(Self.draft))
        let tooMany = Route.refuse(ProtocolError(.rateLimited, "too many messages: at most 1.0 per second across all rooms"))
        #expect(Self.route(chat, &state) != tooMany)
        #expect(Self.route(elsewhere, &state) != tooMany)
        #expect(Self.route(chat, &state) == tooMany)
        #expect(Self.route(chat, &state, now: 1_000) != tooMany)
    }

    /// WebRTC offers, in a room or for an echo test, share one rate; an echo test without an
    /// offer spends none.
    @Test func offersShareOneRate() throws {
        var state = try Self.greeted()
        let tooMany = Route.refuse(ProtocolError(.rateLimited, "too many WebRTC offers: at most 0.5 a second after 1"))
        #expect(Self.route(.echoStart(delay: 0), &state) == .precall(.echoStart(delay: 0, sdp: nil)))
        #expect(Self.route(.echoStart(delay: 0, sdp: "v=0"), &state) == .precall(.echoStart(delay: 0, sdp: "v=0")))
        #expect(Self.route(.room("r1", .offerWebRTC(sdp: "v=0")), &state) == tooMany)
        #expect(Self.route(.echoStart(delay: 0, sdp: "v=0"), &state) == tooMany)
        #expect(Self.route(.room("r1", .offerWebRTC(sdp: "v=0")), &state, now: 2_000) != tooMany)
    }

    /// Reads wait while the answers before them spent the read budget; other ops do not.
    @Test func readsWaitForTheBudget() throws {
        var state = try Self.greeted()
        state.chargeAnswer(Self.limits.answerBurstBytes * 2, now: 0)
        let tooMuch = Route.refuse(ProtocolError(
            .rateLimited, "too much read: answers to joins, syncs, member lists and history of at most \(Self.limits.answerBytesPerSecond) bytes a second"))
        #expect(Self.route(.room("r1", .sync), &state) == tooMuch)
        #expect(Self.route(.room("r1", .listMembers(after: nil, limit: 10)), &state) == tooMuch)
        #expect(Self.route(.room("r1", .takeSeat(index: nil)), &state) == .room(RoomRoute(room: "r1", command: .takeSeat(index: nil), creation: nil, placing: false)))
    }
}
