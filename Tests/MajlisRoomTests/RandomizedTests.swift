import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct RandomizedTests {
    static let users = (0..<24).map { "u\($0)" }

    static func randomCommand(_ rng: inout SplitMix64, engine: RoomEngine) -> RoomCommand {
        let user = users.randomElement(using: &rng)!
        let index = Int.random(in: -1...9, using: &rng)
        let maybeIndex: Int? = Bool.random(using: &rng) ? index : nil
        let requestId = "q\(Int.random(in: 1...40, using: &rng))"
        let inviteId = "i\(Int.random(in: 1...40, using: &rng))"
        let key = "k\(Int.random(in: 0...5, using: &rng))"
        switch Int.random(in: 0..<35, using: &rng) {
        case 0, 1: return .join(create: nil)
        case 2: return .leave
        case 3, 4: return .takeSeat(index: maybeIndex)
        case 5: return .leaveSeat
        case 6: return .switchSeat(to: index)
        case 7: return .lockSeat(index: index, locked: Bool.random(using: &rng), kick: Bool.random(using: &rng))
        case 8: return .muteSeat(index: index, muted: Bool.random(using: &rng))
        case 9: return .kickFromSeat(index: index)
        case 10: return .inviteToSeat(user: user, index: maybeIndex)
        case 11: return .replyToInvite(inviteId: inviteId, accept: Bool.random(using: &rng))
        case 12: return .setMic(on: Bool.random(using: &rng))
        case 13: return .createRequest(index: maybeIndex)
        case 14: return .cancelRequest(requestId: requestId)
        case 15: return .acceptRequest(requestId: requestId, index: maybeIndex)
        case 16: return .rejectRequest(requestId: requestId)
        case 17: return .setRole(user: user, role: Bool.random(using: &rng) ? .admin : .member)
        case 18: return .transferOwner(user: user)
        case 19: return .kickMember(user: user, banSeconds: Int.random(in: 0...2, using: &rng))
        case 20: return .muteChat(user: user, seconds: Int.random(in: 0...3, using: &rng))
        case 21: return .sendChat(ChatDraft(text: "hi", clientMsgId: "c\(Int.random(in: 0...50, using: &rng))"))
        case 22: return .attributes([.set([key: "v"], deleteOnLeave: Bool.random(using: &rng), updateOwner: Bool.random(using: &rng))], force: Bool.random(using: &rng), atomic: false)
        case 23: return .attributes([.delete([key])], force: Bool.random(using: &rng), atomic: Bool.random(using: &rng))
        case 24: return .update(title: nil, announcement: nil, mode: Bool.random(using: &rng) ? .free : .request, seatCount: Bool.random(using: &rng) ? Int.random(in: 1...10, using: &rng) : nil)
        case 25: return .muteChatAll(Bool.random(using: &rng))
        case 26: return .sendSignal(to: .users([user]), type: "t", payload: .null)
        case 27: return .listMembers(after: Bool.random(using: &rng) ? user : nil, limit: 5)
        case 28: return .updateMember(name: "n\(index)", avatar: nil)
        case 30: return .muteAllSeats(muted: Bool.random(using: &rng), membersMayUnmute: Bool.random(using: &rng))
        case 31: return .unban(user: user)
        case 29: return .offerWebRTC(sdp: "v=0")
        case 33: return .allowEmoji(Bool.random(using: &rng))
        case 34: return .sendEmoji(index: index, pack: String(repeating: "a", count: 64), item: "laugh")
        default: return .sync
        }
    }

    /// 120,000 random ops from 24 users (with drops, resumes and clock jumps in between); after
    /// each, every invariant holds, a failed op changed nothing, and seq moved by one per state event.
    @Test func invariantsHoldUnderRandomOps() {
        var rng = SplitMix64(seed: 20_261_129)
        var limits = RoomLimits()
        limits.resumeGrace = 5_000
        limits.snapshotOtherMembers = 5  // so snapshots leave members out, as in a busy room
        var engine = RoomEngine(id: "r", settings: RoomSettings(seatCount: 6), owner: "u0", now: 0, limits: limits)
        var now: Int64 = 0
        var failures = 0
        for step in 0..<120_000 {
            now += Int64.random(in: 0...400, using: &rng)
            let user = Self.users.randomElement(using: &rng)!
            // Now and then the app's backend acts through the server API, as no member.
            let caller =
                Int.random(in: 0..<20, using: &rng) == 0
                ? Caller(id: "api", name: "API", grants: Grants(create: false, admin: true), isOperator: true)
                : Caller(id: user, name: user, grants: Grants(create: false, admin: user == "u23"))
            let seqBefore = engine.seq
            let outcome: RoomOutcome
            switch Int.random(in: 0..<50, using: &rng) {
            case 0: engine.disconnect(user, now: now); outcome = RoomOutcome()
            case 1: engine.reconnect(user); outcome = RoomOutcome()
            case 2: outcome = engine.tick(now: now)
            default:
                let command = Self.randomCommand(&rng, engine: engine)
                if command == .end { continue }
                let seated = engine.seats.map(\.user)
                let names = engine.stored.names
                outcome = engine.handle(command, from: caller, now: now)
                let seatsChanged = engine.seats.map(\.user) != seated || engine.stored.names != names
                if caller.isOperator, case .failure(let error) = outcome.reply {
                    #expect(error.message != "you are not in room r" || !RoomEngine.operatorMay(command), "\(command)")
                }
                if !command.mayStore {
                    // Only who sits where (and the owner's name) is saved for such an op, and only when it changed.
                    #expect(outcome.effects.allSatisfy { if case .memberRemoved = $0 { true } else { $0 == .saveRoom && seatsChanged } }, "\(command)")
                }
            }
            if case .failure = outcome.reply {
                failures += 1
                #expect(outcome.deliveries.isEmpty && engine.seq == seqBefore)
            }
            let stateEvents = outcome.deliveries.filter(\.event.changesRoomState)
            #expect(stateEvents.map(\.seq) == (0..<Int64(stateEvents.count)).map { seqBefore + 1 + $0 })
            let problems = engine.invariantViolations()
            if !problems.isEmpty {
                Issue.record("step \(step): \(problems)")
                return
            }
        }
        // The run exercised both paths.
        #expect(failures > 10_000 && failures < 110_000)
        #expect(engine.seq > 1_000)
    }
}
