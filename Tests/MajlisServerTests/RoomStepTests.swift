import MajlisProtocol
import MajlisRoom
import Testing

@testable import MajlisServer

/// What a room op comes to before anything is done (`RoomStep`): which change waits for the
/// store, what the store is asked, and the webhook events, without a store or a queue.
struct RoomStepTests {
    static let webhooks = RoomWrite.Webhooks(on: true, includeChat: true)
    static let quiet = RoomWrite.Webhooks(on: false, includeChat: false)

    static func room() -> RoomEngine {
        var engine = RoomEngine(id: "r1", settings: RoomSettings(title: "Room"), owner: "owner", now: 0)
        _ = engine.handle(.join(create: nil), from: Caller(id: "owner", name: "Owner"), now: 0)
        return engine
    }

    /// Chat is stored before it counts: the step leaves the engine as it was and holds the
    /// change beside it, with the message and its webhook event in one write.
    @Test func chatWaitsForTheStore() throws {
        var engine = Self.room()
        let step = RoomStep(.sendChat(ChatDraft(text: "hi", clientMsgId: "c1")), from: Caller(id: "owner", name: "Owner"), on: &engine, now: 10, webhooks: Self.webhooks)
        #expect(step.storeFirst != nil)
        #expect(engine.stored == Self.room().stored)
        let write = try #require(step.write)
        #expect(write.effects.contains { if case .storeChat = $0 { true } else { false } })
        #expect(write.events.map(\.type) == ["chat.message"])
    }

    /// A join is made in place (the engine changes nothing when an op fails), and its webhook
    /// event is written after it; without webhooks a join asks nothing of the store.
    @Test func aJoinIsMadeInPlace() throws {
        var engine = Self.room()
        let step = RoomStep(.join(create: nil), from: Caller(id: "huda", name: "Huda"), on: &engine, now: 10, webhooks: Self.webhooks)
        #expect(step.storeFirst == nil)
        #expect(engine.isMember("huda"))
        #expect(step.write?.events.map(\.type) == ["member.joined"])

        var quiet = Self.room()
        #expect(RoomStep(.join(create: nil), from: Caller(id: "omar", name: "Omar"), on: &quiet, now: 10, webhooks: Self.quiet).write == nil)
    }

    /// A handover names its receiver, whose rooms the host counts before keeping it; an admin's
    /// is not counted.
    @Test func aHandoverNamesItsReceiver() {
        var engine = Self.room()
        _ = engine.handle(.join(create: nil), from: Caller(id: "huda", name: "Huda"), now: 5)
        var copy = engine
        let step = RoomStep(.transferOwner(user: "huda"), from: Caller(id: "owner", name: "Owner"), on: &engine, now: 10, webhooks: Self.quiet)
        #expect(step.handover == "huda")
        #expect(step.storeFirst?.owner == "huda" && engine.owner == "owner")
        let admin = Caller(id: "owner", name: "Owner", grants: Grants(admin: true))
        #expect(RoomStep(.transferOwner(user: "huda"), from: admin, on: &copy, now: 10, webhooks: Self.quiet).handover == nil)
    }

    /// A refused op asks nothing: no change, no write.
    @Test func aRefusedOpAsksNothing() {
        var engine = Self.room()
        let step = RoomStep(.kickMember(user: "owner", banSeconds: 0), from: Caller(id: "huda", name: "Huda"), on: &engine, now: 10, webhooks: Self.webhooks)
        #expect(step.write == nil)
        #expect(engine.stored == Self.room().stored)
    }
}
