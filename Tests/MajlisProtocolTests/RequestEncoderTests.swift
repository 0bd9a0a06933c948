import Foundation
import Testing

@testable import MajlisProtocol

/// decode(encode(c)) == c for random room commands of every kind.
@Suite struct RequestEncoderTests {

    static func command(_ rng: inout SplitMix64) -> RoomCommand {
        func id() -> String { "u\(Int.random(in: 0...30, using: &rng))" }
        func index() -> Int { Int.random(in: 0...63, using: &rng) }
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &rng) ? make() : nil }
        func flag() -> Bool { Bool.random(using: &rng) }
        func text() -> String { ["", "hi", "سلام", "你好", "a\"b\\c", String(repeating: "x", count: 100)].randomElement(using: &rng)! }
        func settings() -> RoomSettings {
            RoomSettings(title: text(), seatCount: Int.random(in: 1...64, using: &rng), mode: flag() ? .free : .request, announcement: text(), maxMembers: Int.random(in: 0...500, using: &rng))
        }
        func attrs() -> [String: String] { Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 1...3, using: &rng)).map { ("k\($0)", text()) }) }
        func step() -> AttributeOperation { flag() ? .set(attrs(), deleteOnLeave: flag(), updateOwner: flag()) : .delete(["k\(index())"]) }
        switch Int.random(in: 0..<40, using: &rng) {
        case 0: return .create(settings())
        case 1: return .join(create: maybe(settings))
        case 2: return .leave
        case 3: return .sync
        case 4: return .update(title: maybe(text), announcement: maybe(text), mode: maybe { .request }, seatCount: maybe { Int.random(in: 1...64, using: &rng) })
        case 5: return .muteChatAll(flag())
        case 6: return .end
        case 7: return .takeSeat(index: maybe(index))
        case 8: return .leaveSeat
        case 9: return .switchSeat(to: index())
        case 10: return .lockSeat(index: index(), locked: flag(), kick: flag())
        case 11: return .muteSeat(index: index(), muted: flag())
        case 12: return .kickFromSeat(index: index())
        case 13: return .inviteToSeat(user: id(), index: maybe(index))
        case 14: return .replyToInvite(inviteId: "i\(index())", accept: flag())
        case 15: return .setMic(on: flag())
        case 16: return .createRequest(index: maybe(index))
        case 17: return .cancelRequest(requestId: "q\(index())")
        case 18: return .acceptRequest(requestId: "q\(index())", index: maybe(index))
        case 19: return .rejectRequest(requestId: "q\(index())")
        case 20: return .listMembers(after: maybe(id), limit: Int.random(in: 1...200, using: &rng))
        case 21: return .updateMember(name: maybe { DisplayName.clean("Name \(index())") }, avatar: maybe(text), refusesOwnership: maybe(flag))
        case 22: return .setRole(user: id(), role: flag() ? .admin : .member)
        case 23: return .transferOwner(user: id())
        case 24: return .kickMember(user: id(), banSeconds: Int.random(in: 0...86_400, using: &rng))
        case 25: return .muteChat(user: id(), seconds: Int.random(in: 0...3_600, using: &rng))
        case 26: return .sendChat(ChatDraft(type: flag() ? "text" : "gift", text: maybe(text) ?? "t", payload: maybe { ["n": .int(Int64(index()))] }, clientMsgId: "c\(index())"))
        case 27: return .chatHistory(before: maybe { Int64(index()) }, limit: Int.random(in: 1...100, using: &rng))
        case 28: return .attributes([.set(attrs(), deleteOnLeave: flag(), updateOwner: flag())], force: flag(), atomic: false)
        case 29: return .attributes([.delete(["k1", "k2"])], force: flag(), atomic: false)
        case 30: return .attributes((0..<Int.random(in: 1...4, using: &rng)).map { _ in step() }, force: flag(), atomic: true)
        case 31: return .sendSignal(to: flag() ? .room : .users(Array(Set((0..<3).map { _ in id() })).sorted()), type: "gift", payload: flag() ? .null : ["k": "v"])
        case 33: return .muteAllSeats(muted: flag(), membersMayUnmute: flag())
        case 34: return .unban(user: id())
        case 36: return .allowEmoji(flag())
        case 37: return .sendEmoji(index: index(), pack: String(repeating: "0123456789abcdef", count: 4), item: flag() ? "laugh" : "a.b_c-1")
        case 38:
            let seat = flag()
            return .sendGift(
                from: id(), to: seat ? nil : id(), index: seat ? index() : nil, pack: String(repeating: "fedcba9876543210", count: 4), item: "rose",
                count: Int.random(in: Gift.counts, using: &rng), key: flag() ? id() : "طلب 7")
        case 39: return .giftLeaders(since: Int64.random(in: 0...1_000, using: &rng), until: flag() ? .max : 2_000, limit: Int.random(in: GiftLeaders.limits, using: &rng))
        case 32: return .offerWebRTC(sdp: "v=0\r\n" + text())
        default: return .join(create: nil)
        }
    }

    @Test func everyCommandSurvivesTheWire() throws {
        var rng = SplitMix64(seed: 7)
        var ops = Set<String>()
        for id in 0..<5_000 {
            let command = Self.command(&rng)
            let (op, args) = try #require(RequestEncoder.request(command, room: "r1"))
            ops.insert(op)
            let frame = try JSONEncoder().encode(JSONValue.object(["id": .int(Int64(id)), "op": .string(op), "args": .object(args)]))
            let decoded = RequestDecoder.decode(frame)
            #expect(decoded == .request(IncomingRequest(id: Int64(id), op: op, rid: nil, command: .room("r1", command))), "\(command)")
            if decoded != .request(IncomingRequest(id: Int64(id), op: op, rid: nil, command: .room("r1", command))) { break }
        }
        // Every room op of the protocol was produced.
        #expect(ops == Set(RequestDecoder.ops.filter { !$0.hasPrefix("conv.") && !$0.hasPrefix("msg.") && !$0.hasPrefix("user.") && !$0.hasPrefix("presence.") }).subtracting(["hello", "ping", "session.renew", "bye", "log.deliver", "echo.start", "echo.stop", "probe.start", "probe.result", "probe.stop"]))
        // The one command the wire cannot express: a non-atomic change of several steps.
        #expect(RequestEncoder.request(.attributes([.delete(["a"]), .delete(["b"])], force: false, atomic: false), room: "r") == nil)
    }

    @Test func everyMessagingCommandSurvivesTheWire() throws {
        let commands: [MessagingCommand] = [
            .createGroup(title: "رحلة", members: ["a", "b"]), .list(after: nil, limit: 100), .list(after: "g-1", limit: 5), .get(conversation: "g-1"),
            .invite(conversation: "g-1", users: ["c"]), .remove(conversation: "g-1", user: "c"), .leave(conversation: "g-1"),
            .update(conversation: "g-1", title: "T", about: nil, access: nil), .update(conversation: "g-1", title: nil, about: "All about it", access: .request),
            .createGroup(title: "Open", members: [], access: .open, about: "Anyone"), .discover(query: "東京", cursor: "20", limit: 5),
            .discover(query: nil, cursor: nil, limit: 20), .join(conversation: "g-1", note: "let me in"), .join(conversation: "g-1", note: nil),
            .requests(conversation: "g-1"), .answerRequest(conversation: "g-1", user: "c", accept: false), .muteMember(conversation: "g-1", user: "c", seconds: 0),
            .feature(conversation: "g-1", seq: 3, featured: true), .feature(conversation: "g-1", seq: 3, featured: false), .setRole(conversation: "g-1", user: "c", role: .admin),
            .settings(conversation: "g-1", muted: true, pinned: nil), .settings(conversation: "g-1", muted: nil, pinned: false),
            .send(.user("omar"), MessageDraft(text: "hi", replyTo: 2, mentions: ["omar"], clientMsgId: "c1")),
            .send(.conversation("g-1"), MessageDraft(type: "boat", text: nil, payload: ["n": [1, 2]], fallback: "A boat", clientMsgId: "c2")),
            .sync(conversation: "g-1", after: 7, limit: 50), .read(conversation: "g-1", seq: 9), .typing(conversation: "g-1"),
            .edit(conversation: "g-1", seq: 4, text: "مرحبا"), .revoke(conversation: "g-1", seq: 4),
            .report(conversation: "g-1", seq: 4, reason: "spam"), .search(query: "東京 اجتماع", conversation: nil, cursor: nil, limit: 20),
            .search(query: "hi", conversation: "g-1", cursor: "5.2.g-1", limit: 3), .block(user: "omar"), .unblock(user: "omar"), .listBlocks,
            .presence(users: ["omar", "zaid"]), .sharePresence(.nobody), .sharePresence(nil), .deliverLog(request: "l1", media: "u1"),
        ]
        var ops = Set<String>()
        for (id, command) in commands.enumerated() {
            let (op, args) = RequestEncoder.request(command)
            ops.insert(op)
            let frame = RequestEncoder.frame(id: Int64(id), op: op, args: args)
            #expect(RequestDecoder.decode(frame) == .request(IncomingRequest(id: Int64(id), op: op, rid: nil, command: .messaging(command))), "\(command)")
        }
        #expect(ops == Set(RequestDecoder.ops.filter { $0.hasPrefix("conv.") || $0.hasPrefix("msg.") || $0.hasPrefix("user.") || $0.hasPrefix("presence.") || $0 == "log.deliver" }))
    }
}
