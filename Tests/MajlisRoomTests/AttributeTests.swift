import MajlisProtocol
import MajlisRoom
import Testing

@Suite struct AttributeTests {
    func set(_ values: [String: String], deleteOnLeave: Bool = false, updateOwner: Bool = false) -> AttributeOperation {
        .set(values, deleteOnLeave: deleteOnLeave, updateOwner: updateOwner)
    }

    @Test func firstSetterOwnsAndOthersAreSkipped() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        let first = room.ok("a", .attributes([set(["k": "1"])], force: false, atomic: false))
        #expect(first.reply == .success(.attributes(failed: [])))
        #expect(first.events(to: .room) == [.attributesUpdated(set: ["k": AttributeValue(value: "1", owner: "a")], deleted: [])])
        let second = room.ok("b", .attributes([set(["k": "2", "j": "3"])], force: false, atomic: false))
        #expect(second.reply == .success(.attributes(failed: ["k"])))
        #expect(second.events(to: .room) == [.attributesUpdated(set: ["j": AttributeValue(value: "3", owner: "b")], deleted: [])])
        room.fails("b", .attributes([set(["k": "2"])], force: true, atomic: false), .forbidden)
        let forced = room.ok("owner", .attributes([set(["k": "9"])], force: true, atomic: false))
        #expect(forced.events(to: .room) == [.attributesUpdated(set: ["k": AttributeValue(value: "9", owner: "a")], deleted: [])])
        room.ok("owner", .attributes([set(["k": "10"], updateOwner: true)], force: true, atomic: false))
        #expect(room.engine.snapshot(for: "a", now: room.now).attributes["k"] == AttributeValue(value: "10", owner: "owner"))
    }

    @Test func deleteFollowsOwnership() {
        var room = RoomHarness()
        room.join("a")
        room.ok("a", .attributes([set(["k": "1", "m": "2"])], force: false, atomic: false))
        let skipped = room.ok("owner", .attributes([.delete(["k"])], force: false, atomic: false))
        #expect(skipped.reply == .success(.attributes(failed: ["k"])) && skipped.deliveries.isEmpty)
        let deleted = room.ok("a", .attributes([.delete(["k", "missing"])], force: false, atomic: false))
        #expect(deleted.events(to: .room) == [.attributesUpdated(set: [:], deleted: ["k"])])
        room.ok("owner", .attributes([.delete(["m"])], force: true, atomic: false))
        #expect(room.engine.snapshot(for: "a", now: room.now).attributes.isEmpty)
    }

    /// Keys that outlive their owner's presence are stored as they change; keys deleted on leave
    /// are not, and one that becomes such a key is forgotten by the store.
    @Test func keptKeysAskToBeStored() {
        var room = RoomHarness()
        room.join("a")
        let kept = room.ok("a", .attributes([set(["k": "1"]), set(["gone": "x"], deleteOnLeave: true)], force: false, atomic: false))
        #expect(kept.effects == [.saveAttributes(set: ["k": AttributeValue(value: "1", owner: "a")], deleted: [])])
        let unchanged = room.ok("a", .attributes([set(["k": "1"])], force: false, atomic: false))
        #expect(unchanged.effects.isEmpty)
        let moved = room.ok("a", .attributes([set(["k": "1"], deleteOnLeave: true)], force: false, atomic: false))
        #expect(moved.effects == [.saveAttributes(set: [:], deleted: ["k"])])
        room.ok("a", .attributes([set(["j": "2"])], force: false, atomic: false))
        let deleted = room.ok("a", .attributes([.delete(["j", "gone"])], force: false, atomic: false))
        #expect(deleted.effects == [.saveAttributes(set: [:], deleted: ["j"])])
        // Restored from the store, the kept ones are there, owned as they were.
        let restored = RoomEngine(
            stored: room.engine.stored, bans: [:], lastMsgId: 0, recentChats: [], attributes: ["k": AttributeValue(value: "1", owner: "a")])
        #expect(restored.snapshot(for: "owner", now: room.now).attributes == ["k": AttributeValue(value: "1", owner: "a")])
    }

    @Test func batchIsAllOrNothing() {
        var room = RoomHarness()
        room.join("a")
        room.join("b")
        room.ok("a", .attributes([set(["seat_1": "a"])], force: false, atomic: false))
        room.fails("b", .attributes([set(["seat_2": "b"]), .delete(["seat_1"])], force: false, atomic: true), .conflict)
        #expect(room.engine.snapshot(for: "b", now: room.now).attributes.keys.sorted() == ["seat_1"])
        // A seat switch in one atomic batch.
        let moved = room.ok("a", .attributes([.delete(["seat_1"]), set(["seat_2": "a"])], force: false, atomic: true))
        #expect(moved.events(to: .room) == [.attributesUpdated(set: ["seat_2": AttributeValue(value: "a", owner: "a")], deleted: ["seat_1"])])
    }

    /// A member owns at most 16 keys, and members together leave the last 32 of the room's 128
    /// to the owner and admins: one member cannot shut the room's attributes to everyone.
    @Test func membersHaveAKeyQuotaAndLeaveRoomForModerators() {
        var room = RoomHarness()
        for user in ["a", "b", "c", "d", "e", "f", "g"] { room.join(user) }
        func keys(_ prefix: String, _ range: Range<Int>) -> [String: String] {
            Dictionary(uniqueKeysWithValues: range.map { ("\(prefix)\($0)", "x") })
        }
        room.ok("a", .attributes([set(keys("a", 0..<16))], force: false, atomic: false))
        room.fails("a", .attributes([set(keys("a", 16..<17))], force: false, atomic: false), .tooLarge)
        // Its own keys it may still change and give up.
        room.ok("a", .attributes([set(["a0": "changed"]), .delete(["a1"])], force: false, atomic: false))
        room.ok("a", .attributes([set(["a1": "back"])], force: false, atomic: false))
        for user in ["b", "c", "d", "e"] { room.ok(user, .attributes([set(keys(user, 0..<16))], force: false, atomic: false)) }
        room.ok("f", .attributes([set(keys("f", 0..<16))], force: false, atomic: false))
        #expect(room.engine.snapshot(for: "a", now: room.now).attributes.count == 96)
        room.fails("g", .attributes([set(["g0": "x"])], force: false, atomic: false), .tooLarge)
        // The owner, and an admin, have the last 32.
        room.ok("owner", .attributes([set(keys("o", 0..<31))], force: false, atomic: false))
        room.ok("owner", .setRole(user: "g", role: .admin))
        room.ok("g", .attributes([set(["g0": "x"])], force: false, atomic: false))
        room.fails("g", .attributes([set(["g1": "x"])], force: false, atomic: false), .tooLarge)  // the room's 128
    }

    @Test func limits() {
        var limits = RoomLimits()
        limits.attributeKeys = 3
        var room = RoomHarness(limits: limits)
        room.fails("owner", .attributes([set(["": "x"])], force: false, atomic: false), .badRequest)
        room.fails("owner", .attributes([set([String(repeating: "k", count: 129): "x"])], force: false, atomic: false), .badRequest)
        room.fails("owner", .attributes([set(["k": String(repeating: "v", count: 8193)])], force: false, atomic: false), .tooLarge)
        room.ok("owner", .attributes([set(["a": "1", "b": "2", "c": "3"])], force: false, atomic: false))
        room.fails("owner", .attributes([set(["d": "4"])], force: false, atomic: false), .tooLarge)
    }
}
