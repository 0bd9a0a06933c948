import Foundation
import MajlisKit
import Testing

/// The signaling client's decisions on virtual time: no socket, no task, no clock.
@Suite struct SignalingClientCoreTests {
    typealias Core = SignalingClientCore
    typealias Action = SignalingClientCore.Action

    /// A core and what it said, with the server's side written by hand.
    struct Harness {
        var core: Core
        var now: Int64 = 1_000_000
        var actions: [Action] = []

        init(options: Core.Options = Core.Options(), url: String = "ws://a/v1/signal") {
            core = Core(url: url, token: "t1", options: options, seed: 7)
        }

        mutating func run(_ input: (inout Core, Int64) -> [Action]) -> [Action] {
            let out = input(&core, now)
            actions += out
            return out
        }

        /// Moves time on by `milliseconds`, waking the core at every deadline on the way.
        mutating func advance(by milliseconds: Int64) -> [Action] {
            let end = now + milliseconds
            var out: [Action] = []
            while let deadline = core.nextDeadline, deadline <= end {
                now = max(now, deadline)
                out += run { core, now in core.tick(now: now) }
            }
            now = end
            return out
        }

        /// Frames the core sent on `connection`: (id, op, rid, args).
        static func frames(_ actions: [Action], on connection: Int? = nil) -> [(id: Int64, op: String, rid: String?, args: JSONValue?)] {
            actions.compactMap { action in
                guard case .send(let to, let data) = action, connection == nil || connection == to,
                    let value = try? JSONDecoder().decode(JSONValue.self, from: data), let id = value["id"]?.intValue, let op = value["op"]?.stringValue
                else { return nil }
                return (id, op, value["rid"]?.stringValue, value["args"])
            }
        }

        static func opened(_ actions: [Action]) -> [(Int, String)] {
            actions.compactMap { if case .open(let id, let url) = $0 { (id, url) } else { nil } }
        }

        static func resolved(_ actions: [Action]) -> [Int: Core.Outcome] {
            var all: [Int: Core.Outcome] = [:]
            for case .resolve(let ticket, let outcome) in actions { all[ticket] = outcome }
            return all
        }

        static func events(_ actions: [Action]) -> [SignalingEvent] {
            actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
        }

        /// Answers the `hello` just sent on the newest connection.
        mutating func welcome(session: String = "s1", nodes: [String] = [], heartbeat: Int = 20) -> [Action] {
            guard let (connection, _) = Self.opened(actions).last, let hello = Self.frames(actions, on: connection).last(where: { $0.op == "hello" }) else {
                Issue.record("no hello to answer")
                return []
            }
            let nodeList = nodes.map { #"{"signaling":"\#($0)"}"# }.joined(separator: ",")
            let frame = #"{"re":\#(hello.id),"ok":true,"data":{"session":"\#(session)","user":{"id":"me","name":"Me"},"heartbeat":\#(heartbeat),"expiresAt":9999999999,"resumed":true,"rooms":[],"nodes":[\#(nodeList)]}}"#
            return run { core, now in core.received(Data(frame.utf8), on: connection, now: now) }
        }

        mutating func answer(_ id: Int64, on connection: Int, data: String = "{}") -> [Action] {
            run { core, now in core.received(Data(#"{"re":\#(id),"ok":true,"data":\#(data)}"#.utf8), on: connection, now: now) }
        }

        /// Connects (ticket 1) and answers the hello.
        mutating func connected(nodes: [String] = []) {
            _ = run { core, now in core.connect(1, now: now) }
            _ = welcome(nodes: nodes)
        }
    }

    @Test func connectSaysHelloAndOpensWithTheSession() {
        var h = Harness()
        let opening = h.run { core, now in core.connect(1, now: now) }
        #expect(Harness.opened(opening).map(\.1) == ["ws://a/v1/signal"])
        let hello = Harness.frames(opening).first
        #expect(hello?.op == "hello" && hello?.args?["token"] == "t1" && hello?.args?["resume"] == nil)
        #expect(h.core.phase == .connecting)
        let welcomed = h.welcome()
        guard case .session(let info)? = Harness.resolved(welcomed)[1] else {
            Issue.record("connect not resolved: \(welcomed)")
            return
        }
        #expect(info.session == "s1" && h.core.phase == .open)
        #expect(Harness.events(welcomed) == [.connected(info)])
        // The heartbeat is 20 s: a ping every 10 s.
        #expect(h.core.nextDeadline == h.now + 10_000)
        #expect(Harness.frames(h.advance(by: 10_000)).map(\.op) == ["ping"])
    }

    @Test func helloNamesTheDeviceTheAppGave() {
        var options = Core.Options()
        options.device = "iphone-7f3a"
        var h = Harness(options: options)
        let hello = Harness.frames(h.run { core, now in core.connect(1, now: now) }).first
        #expect(hello?.op == "hello" && hello?.args?["device"] == "iphone-7f3a")
    }

    @Test func aRequestThatTimesOutIsSentAgainWithItsRidThenGivenUp() {
        var h = Harness()
        h.connected()
        let first = Harness.frames(h.run { core, now in core.request(2, op: "chat.send", args: ["text": "hi"], rid: "r1", now: now) })
        #expect(first.map(\.op) == ["chat.send"] && first[0].rid == "r1")
        let second = Harness.frames(h.advance(by: 5_000)).filter { $0.op == "chat.send" }
        #expect(second.count == 1 && second[0].rid == "r1" && second[0].id != first[0].id)
        // The late answer to the first try is not the answer: the retry's is.
        #expect(Harness.resolved(h.answer(first[0].id, on: 1)).isEmpty)
        let third = Harness.frames(h.advance(by: 5_000)).filter { $0.op == "chat.send" }
        #expect(third.count == 1)
        let gaveUp = h.advance(by: 5_000)
        #expect(Harness.resolved(gaveUp)[2] == .failure(.timedOut(op: "chat.send")))
    }

    @Test func aDroppedConnectionReconnectsWithResumeAndSendsWhatWasInFlight() {
        var h = Harness()
        h.connected()
        let sent = Harness.frames(h.run { core, now in core.request(2, op: "seat.take", args: [:], rid: "r2", now: now) })
        let lost = h.run { core, now in core.closed(1, code: 1006, reason: "abnormal", now: now) }
        #expect(Harness.events(lost) == [.connectionLost(reason: "abnormal")])
        #expect(h.core.phase == .reconnecting)
        // The first attempt waits the backoff's first delay, 250 ms.
        #expect(Harness.opened(h.advance(by: 249)).isEmpty)
        let reopening = h.advance(by: 1)
        #expect(Harness.opened(reopening).map(\.0) == [2])
        #expect(Harness.frames(reopening).first?.args?["resume"] == "s1")
        let welcomed = h.welcome()
        #expect(Harness.events(welcomed).count == 1)
        guard case .reconnected? = Harness.events(welcomed).first else {
            Issue.record("not reconnected: \(welcomed)")
            return
        }
        let resent = Harness.frames(welcomed, on: 2)
        #expect(resent.map(\.op) == ["seat.take"] && resent[0].rid == "r2" && resent[0].id != sent[0].id)
        #expect(Harness.resolved(h.answer(resent[0].id, on: 2, data: #"{"seat":3}"#))[2] == .data(["seat": 3]))
    }

    @Test func aServerGoingAwayIsLeftWithinFiftyMilliseconds() {
        var h = Harness()
        h.connected()
        _ = h.run { core, now in core.closed(1, code: 1001, reason: "going away", now: now) }
        #expect(h.core.nextDeadline.map { $0 - h.now } ?? .max <= 50)
        #expect(Harness.opened(h.advance(by: 50)).count == 1)
    }

    @Test func aFailedAttemptTriesTheClusterNextNodeAtOnceThenWaits() {
        var h = Harness()
        h.connected(nodes: ["ws://a/v1/signal", "ws://b/v1/signal", "ws://c/v1/signal"])
        #expect(h.core.candidates == ["ws://a/v1/signal", "ws://b/v1/signal", "ws://c/v1/signal"])
        _ = h.run { core, now in core.closed(1, code: nil, reason: "reset", now: now) }
        #expect(Harness.opened(h.advance(by: 250)).map(\.1) == ["ws://a/v1/signal"])
        // a cannot be reached: b at once, then c at once, then a round's wait (the backoff's second delay).
        _ = h.run { core, now in core.closed(2, code: nil, reason: "refused", now: now) }
        #expect(Harness.opened(h.advance(by: 0)).map(\.1) == ["ws://b/v1/signal"])
        _ = h.run { core, now in core.closed(3, code: nil, reason: "refused", now: now) }
        #expect(Harness.opened(h.advance(by: 0)).map(\.1) == ["ws://c/v1/signal"])
        _ = h.run { core, now in core.closed(4, code: nil, reason: "refused", now: now) }
        #expect(Harness.opened(h.advance(by: 499)).isEmpty)
        #expect(Harness.opened(h.advance(by: 1)).map(\.1) == ["ws://a/v1/signal"])
    }

    @Test func aFinalCloseCodeEndsTheSessionAndFailsWhatWaits() {
        var h = Harness()
        h.connected()
        _ = h.run { core, now in core.request(2, op: "chat.send", args: [:], rid: "r", now: now) }
        let kicked = h.run { core, now in core.closed(1, code: 4003, reason: "kicked", now: now) }
        #expect(Harness.events(kicked) == [.closed(code: 4003, reason: "kicked")])
        #expect(kicked.last == .finish)
        #expect(Harness.resolved(kicked)[2] == .failure(.closed(code: 4003, reason: "kicked")))
        #expect(h.core.phase == .closed && h.core.nextDeadline == nil)
        let later = h.run { core, now in core.request(3, op: "chat.send", args: [:], rid: "r3", now: now) }
        #expect(Harness.resolved(later)[3] == .failure(.closed(code: 4003, reason: "kicked")))
    }

    @Test func twoUnansweredPingsCloseTheConnectionAndReconnect() {
        var h = Harness()
        h.connected()
        // Ping at 10 s, unanswered by 20 s; ping at 30 s, unanswered by 40 s: dead.
        let out = h.advance(by: 40_000)
        #expect(Harness.frames(out).map(\.op) == ["ping", "ping"])
        #expect(out.contains(.close(1, code: 1001, reason: "heartbeat")))
        #expect(Harness.events(out) == [.connectionLost(reason: "heartbeat lost")])
        #expect(Harness.opened(h.advance(by: 250)).count == 1)
    }

    @Test func anAnsweredPingLearnsTheNodesThatJoined() {
        var h = Harness()
        h.connected(nodes: ["ws://a/v1/signal"])
        guard let ping = Harness.frames(h.advance(by: 10_000)).first else {
            Issue.record("no ping")
            return
        }
        _ = h.answer(ping.id, on: 1, data: #"{"nodes":[{"signaling":"ws://a/v1/signal"},{"signaling":"ws://d/v1/signal"}]}"#)
        #expect(h.core.candidates == ["ws://a/v1/signal", "ws://d/v1/signal"])
        #expect(h.core.nextDeadline == h.now + 10_000)
    }

    @Test func moveClosesAndOpensAtTheRoomsNode() {
        var h = Harness()
        h.connected(nodes: ["ws://a/v1/signal", "ws://b/v1/signal"])
        let moving = h.run { core, now in core.move(5, to: "ws://b/v1/signal", now: now) }
        #expect(moving.contains(.close(1, code: 1000, reason: "moving to another node")))
        #expect(Harness.events(moving) == [.connectionLost(reason: "moving to ws://b/v1/signal")])
        #expect(Harness.opened(h.advance(by: 0)).map(\.1) == ["ws://b/v1/signal"])
        #expect(Harness.resolved(h.welcome())[5] == .moved("ws://b/v1/signal"))
        // Already there: nothing to do.
        #expect(Harness.resolved(h.run { core, now in core.move(6, to: "ws://b/v1/signal", now: now) })[6] == .moved("ws://b/v1/signal"))
    }

    @Test func disconnectSaysByeThenCloses() {
        var h = Harness()
        h.connected()
        let saying = h.run { core, now in core.disconnect(9, now: now) }
        #expect(Harness.frames(saying).map(\.op) == ["bye"])
        #expect(Harness.resolved(saying).isEmpty)
        let done = h.answer(Harness.frames(saying)[0].id, on: 1)
        #expect(done.contains(.close(1, code: 1000, reason: "bye")))
        #expect(Harness.events(done) == [.closed(code: 1000, reason: "bye")])
        #expect(Harness.resolved(done)[9] == .done)
    }

    @Test func reconnectingGivesUpAfterItsTime() {
        var options = Core.Options()
        options.reconnectFor = 10_000
        var h = Harness(options: options)
        h.connected()
        _ = h.run { core, now in core.closed(1, code: nil, reason: "reset", now: now) }
        var closed: [SignalingEvent] = []
        // Every attempt is refused at once, until the time is up.
        while closed.isEmpty && h.now < 1_000_000 + 60_000 {
            let out = h.advance(by: 100)
            for (connection, _) in Harness.opened(out) {
                closed += Harness.events(h.run { core, now in core.closed(connection, code: nil, reason: "refused", now: now) })
            }
        }
        #expect(closed == [.closed(code: nil, reason: "could not reconnect")])
        #expect(h.now - 1_000_000 <= 10_000 + 8_000 + 100)
    }

    @Test func aFirstConnectionThatFailsSaysWhyAndRetriesNothing() {
        var h = Harness()
        _ = h.run { core, now in core.connect(1, now: now) }
        _ = h.run { core, now in core.request(2, op: "room.join", args: [:], rid: "r", now: now) }
        let failed = h.run { core, now in core.closed(1, code: nil, reason: "HS: ws upgrade response not 101", now: now) }
        let why = MajlisError.closed(
            code: nil, reason: "the server answered but is not Majlis signaling at this address (HS: ws upgrade response not 101); the path is /v1/signal")
        #expect(Harness.resolved(failed) == [1: .failure(why), 2: .failure(why)])
        #expect(h.core.phase == .closed && h.core.nextDeadline == nil)
    }

    @Test func aRefusedHelloIsTheCallersError() {
        var h = Harness()
        _ = h.run { core, now in core.connect(1, now: now) }
        let hello = Harness.frames(h.actions)[0]
        let refused = h.run { core, now in
            core.received(Data(#"{"re":\#(hello.id),"ok":false,"error":{"code":"unauthorized","message":"bad token"}}"#.utf8), on: 1, now: now)
        }
        #expect(refused.contains(.close(1, code: 1000, reason: "hello refused")))
        guard case .failure(.server(let error))? = Harness.resolved(refused)[1] else {
            Issue.record("not refused: \(refused)")
            return
        }
        #expect(error.code == .unauthorized)
    }

    @Test func unreadableFramesAreLoggedAndChangeNothing() {
        var h = Harness()
        h.connected()
        let out = h.run { core, now in core.received(Data("not json".utf8), on: 1, now: now) }
        #expect(out == [.log(.warning, "unreadable frame from the server")])
        // A frame of a connection already replaced is not this one's.
        #expect(h.run { core, now in core.received(Data(#"{"ev":"x"}"#.utf8), on: 99, now: now) }.isEmpty)
        #expect(h.core.phase == .open)
    }
}
