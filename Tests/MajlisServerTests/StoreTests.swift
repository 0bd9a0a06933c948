import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisServer
import Testing

@Suite struct StoreTests {
    func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("majlis-store-\(UUID().uuidString)").path
    }

    @Test func migratesOnceAndRefusesANewerSchema() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(directory: path)
        #expect(store.schemaVersion == 3)
        try store.saveRoom(RoomEngine(id: "r", settings: RoomSettings(title: "T"), owner: "o", now: 5).stored)
        // Opening again keeps the data and runs nothing twice.
        let again = try Store(directory: path)
        #expect(again.schemaVersion == 3)
        #expect(try again.roomIds() == ["r"])
        // A database from a newer majlis is refused, not damaged.
        let newer = directory()
        defer { try? FileManager.default.removeItem(atPath: newer) }
        _ = try Store(directory: newer)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(newer)/majlis.sqlite'); c.execute('PRAGMA user_version = 99'); c.commit()"]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(throws: (any Error).self) { try Store(directory: newer) }
    }

    @Test func chatIsStoredOncePerClientIdAndPagesNewestFirst() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(directory: path)
        for id in 1...5 {
            let message = ChatMessage(msgId: Int64(id), from: UserRef(id: "a", name: "A"), type: "text", text: "m\(id)", payload: id == 5 ? ["k": [1, 2]] : nil, ts: Int64(id))
            try store.insertChat(room: "r", message: message, clientMsgId: "c\(id)")
        }
        // The same client id again is ignored.
        try store.insertChat(room: "r", message: ChatMessage(msgId: 6, from: UserRef(id: "a", name: "A"), type: "text", text: "dup", payload: nil, ts: 6), clientMsgId: "c5")
        let newest = try store.history(room: "r", before: nil, limit: 2)
        #expect(newest.map(\.msgId) == [5, 4])
        #expect(newest.first?.payload == ["k": [1, 2]])
        #expect(try store.history(room: "r", before: 4, limit: 10).map(\.msgId) == [3, 2, 1])
        #expect(try store.history(room: "other", before: nil, limit: 10).isEmpty)
        try store.saveRoom(RoomEngine(id: "r", settings: RoomSettings(), owner: "a", now: 0).stored)
        let loaded = try #require(try store.loadRoom("r", now: 0))
        #expect(loaded.lastMsgId == 5)
        #expect(loaded.recentChats.last.map { [$0.clientMsgId: $0.msgId] } == ["c5": 5])
    }

    /// Retention keeps at most N messages per room and none older than the cutoff, but always a
    /// room's newest message, so message ids go on from it after a restart.
    @Test func chatRetentionByCountAndAge() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(directory: path)
        for room in ["busy", "quiet"] {
            for id in 1...10 {
                let message = ChatMessage(msgId: Int64(id), from: UserRef(id: "a", name: "A"), type: "text", text: "m\(id)", payload: nil, ts: Int64(id * 1000))
                try store.insertChat(room: room, message: message, clientMsgId: "c\(id)")
            }
        }
        // Older than 7 s in both rooms; and at most 5 per room.
        #expect(try store.pruneChat(before: 7_000, keep: 5) == 12)
        #expect(try store.history(room: "busy", before: nil, limit: 100).map(\.msgId) == [10, 9, 8, 7])
        // Everything is past its age: the newest message stays.
        try store.pruneChat(before: 1_000_000, keep: 5)
        #expect(try store.history(room: "quiet", before: nil, limit: 100).map(\.msgId) == [10])
        try store.saveRoom(RoomEngine(id: "quiet", settings: RoomSettings(), owner: "a", now: 0).stored)
        #expect(try store.loadRoom("quiet", now: 0)?.lastMsgId == 10)
    }

    /// The outbox hands out one event per room and endpoint at a time, oldest first, and holds a
    /// room's later events behind a failing one while other rooms go on.
    @Test func webhookOutboxKeepsEachRoomInOrder() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(directory: path)
        let endpoints = ["http://a/hooks", "http://b/hooks"]
        let stored = RoomEngine(id: "r", settings: RoomSettings(), owner: "o", now: 0).stored
        let events = (1...3).map { WebhookEvent(type: "member.joined", room: "r", time: Int64($0), data: ["n": .int(Int64($0))]) }
        try store.commit(room: "r", effects: [], state: stored, events: events, endpoints: endpoints)
        try store.commit(room: "s", effects: [], state: stored, events: [WebhookEvent(type: "room.started", room: "s", time: 1, data: [:])], endpoints: endpoints)
        let due = try store.dueWebhooks(now: 10, limit: 10)
        // The first of each room, for each endpoint.
        #expect(due.map(\.room).sorted() == ["r", "r", "s", "s"])
        let first = try #require(due.first { $0.room == "r" && $0.endpoint == endpoints[0] })
        #expect(first.body.contains(#""seq":1"#) && first.body.contains(#""n":1"#))
        // One fails (retry later): its room waits; delivered ones let the next through.
        try store.webhookFailed(first, error: "HTTP 500", retryAt: 1_000)
        for other in due where other != first { try store.webhookDelivered(other, at: 11) }
        let next = try store.dueWebhooks(now: 20, limit: 10)
        #expect(next.map { "\($0.endpoint) \($0.room)" } == ["http://b/hooks r"])
        #expect(next.first?.body.contains(#""seq":2"#) == true)
        // Busy lanes are skipped; the failed one comes back when due, with its attempt counted.
        #expect(try store.dueWebhooks(now: 20, limit: 10, busy: [Store.webhookLane(endpoints[1], "r")]).isEmpty)
        #expect(try store.dueWebhooks(now: 1_000, limit: 10).first { $0.endpoint == endpoints[0] }?.attempts == 1)
        #expect(try store.webhookQueueDepth() == 5)
        // Given up: the room's next event goes out.
        try store.webhookFailed(first, error: "HTTP 500", retryAt: nil)
        #expect(try store.dueWebhooks(now: 1_000, limit: 10).contains { $0.endpoint == endpoints[0] && $0.body.contains(#""seq":2"#) })
        #expect(try store.webhookRecords(state: "failed", room: nil, after: nil, limit: 10).map(\.seq) == [1])
        // A replay puts it back in its place.
        #expect(try store.replayWebhook(first.eventId, now: 2_000))
        #expect(try store.dueWebhooks(now: 2_000, limit: 10).first { $0.endpoint == endpoints[0] }?.eventId == first.eventId)
        #expect(try !store.replayWebhook("ev_none", now: 2_000))
    }
}
