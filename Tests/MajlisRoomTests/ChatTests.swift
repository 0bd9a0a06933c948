import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct ChatTests {
    @Test func sendIsStoredAndBroadcastToEveryone() {
        var room = RoomHarness()
        room.join("a")
        let outcome = room.ok("a", .sendChat(ChatDraft(type: "text", text: "salam", clientMsgId: "c1")))
        let message = ChatMessage(msgId: 1, from: UserRef(id: "a", name: "name-a"), type: "text", text: "salam", payload: nil, ts: room.now)
        #expect(outcome.reply == .success(.chatPosted(msgId: 1, ts: room.now)))
        #expect(outcome.deliveries == [Delivery(audience: .room, seq: nil, event: .chatMessage(message))])
        #expect(outcome.effects == [.storeChat(message, clientMsgId: "c1")])
    }

    @Test func sameClientMsgIdStoresOneMessage() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .sendChat(ChatDraft(text: "one", clientMsgId: "c1")))
        room.now += 5
        let retry = room.ok("a", .sendChat(ChatDraft(text: "one", clientMsgId: "c1")))
        #expect(retry.reply == .success(.chatPosted(msgId: 1, ts: room.now - 5)))
        #expect(retry.deliveries.isEmpty && retry.effects.isEmpty)
        // Another user may use the same client id.
        room.join("b")
        #expect(room.ok("b", .sendChat(ChatDraft(text: "two", clientMsgId: "c1"))).reply == .success(.chatPosted(msgId: 2, ts: room.now)))
    }

    @Test func dedupeSurvivesRestore() {
        let restored = RoomEngine(
            stored: RoomHarness().engine.stored, bans: [:], lastMsgId: 9, recentChats: [("a", "c1", 9, 500)])
        var room = RoomHarness()
        room.engine = restored
        room.join("a")
        #expect(room.ok("a", .sendChat(ChatDraft(text: "x", clientMsgId: "c1"))).reply == .success(.chatPosted(msgId: 9, ts: 500)))
        #expect(room.ok("a", .sendChat(ChatDraft(text: "x", clientMsgId: "c2"))).reply == .success(.chatPosted(msgId: 10, ts: room.now)))
    }

    @Test func limits() {
        var room = RoomHarness()
        room.join("a")
        room.grants["silent"] = Grants(chat: false)
        room.join("silent")
        room.fails("silent", .sendChat(ChatDraft(text: "x", clientMsgId: "1")), .forbidden)
        room.fails("a", .sendChat(ChatDraft(text: String(repeating: "ب", count: 501), clientMsgId: "1")), .tooLarge)
        room.ok("a", .sendChat(ChatDraft(text: String(repeating: "ب", count: 500), clientMsgId: "2")))
        let big = JSONValue.string(String(repeating: "x", count: 4100))
        room.fails("a", .sendChat(ChatDraft(type: "gift", text: nil, payload: big, clientMsgId: "3")), .tooLarge)
        room.ok("a", .sendChat(ChatDraft(type: "gift", text: nil, payload: .object(["gift": .string("rose")]), clientMsgId: "4")))
    }

    @Test func rateLimitRefills() {
        var room = RoomHarness()
        room.join("a")
        for index in 0..<10 { room.ok("a", .sendChat(ChatDraft(text: "m", clientMsgId: "b\(index)"))) }
        room.fails("a", .sendChat(ChatDraft(text: "m", clientMsgId: "over")), .rateLimited)
        room.now += 500
        room.ok("a", .sendChat(ChatDraft(text: "m", clientMsgId: "later")))
        room.fails("a", .sendChat(ChatDraft(text: "m", clientMsgId: "over2")), .rateLimited)
    }

    @Test func historyIsForMembers() {
        var room = RoomHarness()
        room.fails("x", .chatHistory(before: nil, limit: 10), .notInRoom)
        #expect(room.ok("owner", .chatHistory(before: 5, limit: 10)).reply == .success(.history(before: 5, limit: 10)))
    }

    @Test func signalsGoToTargetsOnly() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        let toRoom = room.ok("a", .sendSignal(to: .room, type: "emoji", payload: .string("🎉")))
        #expect(toRoom.deliveries == [Delivery(audience: .roomExcept("a"), seq: nil, event: .signal(from: "a", type: "emoji", payload: .string("🎉")))])
        let toSome = room.ok("a", .sendSignal(to: .users(["b", "ghost"]), type: "poke", payload: .null))
        #expect(toSome.deliveries.map(\.audience) == [.users(["b"])])
        room.fails("a", .sendSignal(to: .room, type: "big", payload: .string(String(repeating: "x", count: 5000))), .tooLarge)
        room.fails("ghost", .sendSignal(to: .room, type: "x", payload: .null), .notInRoom)
    }

    /// A seat emoji goes to everyone, the sender too; the owner may turn emoji off for members
    /// (not for itself or admins), saved with the room.
    @Test func seatEmojiGoToEveryoneUnlessTheOwnerTurnsThemOff() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        let pack = String(repeating: "e", count: 64)
        let sent = room.ok("a", .sendEmoji(index: 2, pack: pack, item: "laugh"))
        #expect(sent.deliveries == [Delivery(audience: .room, seq: nil, event: .seatEmoji(index: 2, user: "a", pack: pack, item: "laugh"))])
        room.fails("a", .sendEmoji(index: 99, pack: pack, item: "laugh"), .badRequest)
        room.fails("ghost", .sendEmoji(index: 0, pack: pack, item: "laugh"), .notInRoom)
        room.fails("a", .allowEmoji(false), .forbidden)
        let off = room.ok("owner", .allowEmoji(false))
        #expect(off.effects == [.saveRoom] && room.engine.info.emojiOff == true && room.engine.stored.emojiOff == true)
        #expect(off.deliveries.map(\.event) == [.roomUpdated(room.engine.info)])
        room.fails("a", .sendEmoji(index: 0, pack: pack, item: "laugh"), .forbidden)
        _ = room.ok("owner", .sendEmoji(index: 0, pack: pack, item: "laugh"))
        #expect(room.ok("owner", .allowEmoji(false)).deliveries.isEmpty, "no change, no event")
        _ = room.ok("owner", .allowEmoji(true))
        #expect(room.engine.info.emojiOff == nil && room.engine.stored.emojiOff == nil)
        _ = room.ok("a", .sendEmoji(index: 0, pack: pack, item: "laugh"))
    }

    /// What one member makes the server send to everyone is held to a budget in bytes, signals
    /// and attribute changes together: 4 KiB signals pass for the burst, then at the budget's
    /// rate; leaving and joining again does not refill it; a server admin is not counted.
    /// (Before: 48 signals of 4 KiB a second reached every member.)
    @Test func roomWideEventsHaveAByteBudgetPerMember() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        let big = JSONValue.string(String(repeating: "x", count: 4_000))
        func burst() -> Int {
            (0..<40).count { _ in
                if case .success = room.run("a", .sendSignal(to: .room, type: "blob", payload: big)).reply { return true }
                return false
            }
        }
        let limits = RoomLimits()
        let cost = 4_002 + 4 + 96  // the payload as JSON, the type, an event's own bytes
        let first = burst()
        #expect(first == limits.broadcastBurstBytes / cost)
        room.fails("a", .sendSignal(to: .users(["b"]), type: "blob", payload: big), .rateLimited)
        room.fails("a", .attributes([.set(["k": String(repeating: "v", count: 4_000)], deleteOnLeave: false, updateOwner: false)], force: false, atomic: false), .rateLimited)
        room.fails("a", .updateMember(name: nil, avatar: String(repeating: "a", count: 4_000), refusesOwnership: nil), .rateLimited)
        // The owner's announcements are sent to everyone too: a thousand characters each, the
        // burst passes 59 of them (1,096 bytes each).
        let announced = (0..<80).count { index in
            let text = String(repeating: "n", count: 999) + String(index % 10)
            if case .success = room.run("owner", .update(title: nil, announcement: text, mode: nil, seatCount: nil)).reply { return true }
            return false
        }
        #expect(announced == limits.broadcastBurstBytes / (1_000 + 96))
        // Another member's budget is its own.
        room.ok("b", .sendSignal(to: .room, type: "blob", payload: big))
        // Left and back: still spent.
        room.ok("a", .leave)
        room.join("a")
        room.fails("a", .sendSignal(to: .room, type: "blob", payload: big), .rateLimited)
        // A second later: a second's worth.
        room.now += 1_000
        #expect(burst() == (limits.broadcastBurstBytes - first * cost + limits.broadcastBytesPerSecond) / cost)
        // A small signal a few times a second, as apps send reactions, never runs out.
        room.join("c")
        for _ in 0..<600 {
            room.ok("c", .sendSignal(to: .room, type: "emoji", payload: .string("🎉")))
            room.now += 100
        }
        // The server API's calls (an admin's token) are not counted.
        room.grants["ops"] = Grants(admin: true)
        room.join("ops")
        for _ in 0..<40 { room.ok("ops", .sendSignal(to: .room, type: "blob", payload: big)) }
    }
}
