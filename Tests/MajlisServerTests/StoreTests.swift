import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisPacks
import MajlisServer
import MajlisTestSupport
import Testing

/// Where a store under test keeps its data: an SQLite file, or a fresh database on a throwaway
/// PostgreSQL server. Every test of the store runs on both: the same behaviour, one suite.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A new, empty place for a store: a data directory, or a database's URL.
    /// PostgreSQL is started (first use) and asked off the tests' shared thread pool.
    func place() async throws -> String {
        switch self {
        case .sqlite:
            return FileManager.default.temporaryDirectory.appendingPathComponent("majlis-store-\(UUID().uuidString)").path
        case .postgres:
            let server = try #require(await offPool { PostgresServer.shared }, "PostgreSQL is needed for the store's tests (scripts/install-deps --test)")
            return try await offPool { try server.makeDatabase() }
        }
    }

    /// Opens (or reopens) the store at `place`.
    func open(_ place: String) throws -> Store {
        self == .sqlite ? try Store(directory: place) : try Store(postgres: place)
    }

    /// Removes what `place` left on disk (a throwaway server's databases go with it).
    func discard(_ place: String) {
        if self == .sqlite { try? FileManager.default.removeItem(atPath: place) }
    }

    /// Marks the store at `place` as made by a newer majlis (schema 99).
    func makeNewer(_ place: String) throws {
        let argv: [String]
        switch self {
        case .sqlite:
            argv = ["/usr/bin/python3", "-c", "import sqlite3; c = sqlite3.connect('\(place)/majlis.sqlite'); c.execute('PRAGMA user_version = 99'); c.commit()"]
        case .postgres:
            argv = ["/usr/bin/psql", "-q", "-v", "ON_ERROR_STOP=1", place, "-c", "INSERT INTO majlis_schema (version) VALUES (99)"]
        }
        #expect(try ChildProcess.run(argv) == 0)
    }
}

@Suite struct StoreTests {
    @Test(arguments: StoreBackend.allCases) func migratesOnceAndRefusesANewerSchema(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        let latest = backend == .sqlite ? 13 : 11
        #expect(store.schemaVersion == latest)
        try store.saveRoom(RoomEngine(id: "r", settings: RoomSettings(title: "T"), owner: "o", now: 5).stored)
        // Opening again keeps the data and runs nothing twice.
        let again = try backend.open(place)
        #expect(again.schemaVersion == latest)
        #expect(try again.roomIds() == ["r"])
        // A database from a newer majlis is refused, not damaged.
        let newer = try await backend.place()
        defer { backend.discard(newer) }
        _ = try backend.open(newer)
        try backend.makeNewer(newer)
        #expect(throws: (any Error).self) { try backend.open(newer) }
    }

    /// Rooms page by id and count by owner; bans, remembered replies and read-only mode behave
    /// the same on every store; deleting a room takes its bans and chat with it.
    @Test(arguments: StoreBackend.allCases) func roomsBansRepliesAndDeletion(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        for (index, (id, owner)) in [("b", "x"), ("a", "y"), ("C", "x"), ("غرفة", "x")].enumerated() {
            try store.saveRoom(RoomEngine(id: id, settings: RoomSettings(title: "مجلس \(index) 🎙"), owner: owner, now: Int64(index)).stored)
        }
        #expect(try store.roomIds() == ["b", "a", "C", "غرفة"])
        // Ids order bytewise, as SQLite's binary collation does: uppercase first, Arabic last.
        #expect(try store.listRooms(after: nil, limit: 2, owner: nil).map(\.id) == ["C", "a"])
        #expect(try store.listRooms(after: "a", limit: 10, owner: nil).map(\.id) == ["b", "غرفة"])
        #expect(try store.listRooms(after: nil, limit: 10, owner: "x").map(\.id) == ["C", "b", "غرفة"])
        #expect(try store.listRooms(after: nil, limit: 10, owner: "x").last?.title == "مجلس 3 🎙")
        #expect(try store.roomCount(ownedBy: "x") == 3 && store.roomCount(ownedBy: "nobody") == 0)
        #expect(try store.roomExists("a") && !store.roomExists("z"))

        try store.saveBan(room: "a", user: "u", until: 100)
        try store.saveBan(room: "a", user: "u", until: 200)
        #expect(try store.loadRoom("a", now: 150)?.bans == ["u": 200])
        #expect(try store.loadRoom("a", now: 250)?.bans == [:])

        let first = Store.RememberedReply(ok: true, body: Data(#"{"n":1}"#.utf8), at: 10)
        try store.rememberReply(user: "u", rid: "r1", reply: first)
        #expect(try store.rememberedReply(user: "u", rid: "r1", since: 5) == first)
        #expect(try store.rememberedReply(user: "u", rid: "r1", since: 11) == nil)
        #expect(try store.rememberedReply(user: "v", rid: "r1", since: 0) == nil)
        let second = Store.RememberedReply(ok: false, body: Data(#"{"code":"x"}"#.utf8), at: 20)
        try store.rememberReply(user: "u", rid: "r1", reply: second)
        #expect(try store.rememberedReply(user: "u", rid: "r1", since: 0) == second)
        try store.pruneReplies(before: 21)
        #expect(try store.rememberedReply(user: "u", rid: "r1", since: 0) == nil)

        let message = ChatMessage(msgId: 1, from: UserRef(id: "u", name: "عمر"), type: "text", text: "سلام 👋", payload: nil, ts: 1)
        try store.insertChat(room: "a", message: message, clientMsgId: "c1")
        #expect(try store.history(room: "a", before: nil, limit: 5) == [message])
        // Attributes: set, overwritten, forgotten, each by the effect the room asked for.
        let stored = try #require(try store.loadRoom("a", now: 0)).stored
        let set = ["k1": AttributeValue(value: "v1", owner: "u"), "k2": AttributeValue(value: "ق", owner: "y")]
        try store.commit(room: "a", effects: [.saveAttributes(set: set, deleted: [])], state: stored, events: [], endpoints: [])
        try store.commit(
            room: "a", effects: [.saveAttributes(set: ["k1": AttributeValue(value: "v2", owner: "y")], deleted: ["k2"])], state: stored, events: [],
            endpoints: [])
        #expect(try store.loadRoom("a", now: 0)?.attributes == ["k1": AttributeValue(value: "v2", owner: "y")])
        try store.deleteRoom("a")
        #expect(try !store.roomExists("a") && store.history(room: "a", before: nil, limit: 5).isEmpty)
        #expect(try store.loadRoom("a", now: 0) == nil)

        // Read-only: a write fails and changes nothing; writable again, it goes through.
        try store.setReadOnly(true)
        #expect(throws: (any Error).self) { try store.saveRoom(RoomEngine(id: "ro", settings: RoomSettings(), owner: "x", now: 9).stored) }
        try store.setReadOnly(false)
        #expect(try !store.roomExists("ro"))
        try store.saveRoom(RoomEngine(id: "ro", settings: RoomSettings(), owner: "x", now: 9).stored)
        #expect(try store.roomExists("ro"))
    }

    /// Two nodes on one store: the node that took a room's fence last is the only one whose
    /// writes for it are kept; the other's are refused whole (room, chat, events), on a room
    /// just created as on one long stored.
    @Test(arguments: StoreBackend.allCases) func onlyTheNewestFenceWritesARoom(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let first = try backend.open(place)
        let second = try backend.open(place)
        let old = try first.takeFence("salon")
        let room = RoomEngine(id: "salon", settings: RoomSettings(title: "Salon"), owner: "huda", now: 1).stored
        try first.createRoom(room, events: [], endpoints: [], fence: old)
        let message = ChatMessage(msgId: 1, from: UserRef(id: "huda", name: "Huda"), type: "text", text: "first", payload: nil, ts: 2)
        try first.commit(room: "salon", effects: [.storeChat(message, clientMsgId: "c1")], state: room, events: [], endpoints: [], fence: old)

        let new = try second.takeFence("salon")
        #expect(new > old)
        var renamed = room
        renamed.title = "Taken over"
        let late = ChatMessage(msgId: 2, from: UserRef(id: "huda", name: "Huda"), type: "text", text: "from the old node", payload: nil, ts: 3)
        let event = WebhookEvent(type: "chat.message", room: "salon", time: 3, data: [:])
        #expect(throws: Store.Fenced.self) {
            try first.commit(
                room: "salon", effects: [.saveRoom, .storeChat(late, clientMsgId: "c2")], state: renamed, events: [event], endpoints: ["http://hook"],
                fence: old)
        }
        #expect(throws: Store.Fenced.self) { try first.createRoom(renamed, events: [], endpoints: [], fence: old) }
        #expect(try second.loadRoom("salon", now: 4)?.stored.title == "Salon")
        #expect(try second.history(room: "salon", before: nil, limit: 5) == [message])
        #expect(try second.webhookQueueDepth() == 0)
        // The new holder writes; a room no node has taken a fence for is written without one.
        try second.commit(room: "salon", effects: [.saveRoom], state: renamed, events: [], endpoints: [], fence: new)
        #expect(try first.loadRoom("salon", now: 5)?.stored.title == "Taken over")
        #expect(try second.takeFence("diwan") == 1)
    }

    /// A store copied into an empty one (SQLite into PostgreSQL, and back into a new SQLite file)
    /// arrives whole; a store that holds anything is not copied into; events written after a
    /// copy are numbered after the copied ones.
    /// A new SQLite store is its owner's alone; a file that is not a store, or a damaged one,
    /// is refused at open, naming it.
    @Test func aStoreIsPrivateAndADamagedOneIsRefusedByName() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/majlis.sqlite"
        do {
            let store = try Store(directory: directory)
            try store.saveBan(room: "r", user: "u", until: Int64.max)
            store.flush()
        }
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "\(String(mode ?? 0, radix: 8))")
        // Damaged in its middle: refused, not served until a room fails to load.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        handle.write(Data(repeating: 0xFF, count: 4096))
        try handle.close()
        #expect {
            _ = try Store(directory: directory)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("not a sound Majlis store")
        }
        try Data("not a database at all".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try Store(directory: directory)
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("file is not a database")
        }
    }

    @Test func copyMovesEverythingIntoAnEmptyStoreAndBack() async throws {
        let file = try await StoreBackend.sqlite.place()
        defer { StoreBackend.sqlite.discard(file) }
        let source = try StoreBackend.sqlite.open(file)
        let stored = RoomEngine(id: "r", settings: RoomSettings(title: "مجلس"), owner: "o", now: 1).stored
        try source.saveRoom(stored)
        try source.saveBan(room: "r", user: "u", until: 500)
        let message = ChatMessage(msgId: 1, from: UserRef(id: "o", name: "O"), type: "gift", text: nil, payload: ["n": 3], ts: 2)
        try source.insertChat(room: "r", message: message, clientMsgId: "c1")
        let reply = Store.RememberedReply(ok: true, body: Data("{}".utf8), at: 3)
        try source.rememberReply(user: "o", rid: "x", reply: reply)
        let endpoints = ["http://hooks/a"]
        let mood = ["mood": AttributeValue(value: "😊", owner: "o")]
        let gift = Gift(from: "o", fromName: "O", to: "u", index: 2, pack: String(repeating: "ab", count: 32), item: "rose", count: 5, ts: 4)
        try source.commit(room: "r", effects: [.saveAttributes(set: mood, deleted: []), .storeGift(gift, key: "k1")], state: stored, events: [WebhookEvent(type: "room.started", room: "r", time: 4, data: [:])], endpoints: endpoints)
        try source.createGroup("g", title: "أصدقاء", owner: "o", members: [], access: .request, about: "كل شيء", now: 5)
        try source.muteMember("g", user: "o", until: 99)
        try source.addJoinRequest(JoinRequest(conversation: "g", user: "y", name: "Y", note: "hi", at: 6))
        let held = try source.hold(MessageDraft(text: "psst", clientMsgId: "h1"), in: "d-x", from: UserRef(id: "s", name: "S"), to: "o", as: "h-1", now: 8)
        let card = MessageDraft(type: "invite", text: nil, payload: ["room": "r"], fallback: "Join my room", replyTo: nil, mentions: ["o"], clientMsgId: "m1")
        try source.block("x", by: "o", now: 7)
        guard case .posted(let posted, _) = try source.post(card, in: "g", from: UserRef(id: "o", name: "O"), now: 6) else {
            Issue.record("the card was not posted")
            return
        }
        try source.feature(posted.seq, in: "g", at: 9)
        try source.createUpload(Upload(id: "u1", owner: "o", length: 4, mime: "image/png", createdAt: 1, expiresAt: 100))
        _ = try source.append([1, 2, 3, 4], to: "u1", of: "o", at: 0, now: 2)
        let photo = MessageDraft(type: "image", text: nil, payload: ["media": "u1"], fallback: "[Photo]", clientMsgId: "m2")
        _ = try source.post(photo, in: "g", from: UserRef(id: "o", name: "O"), now: 7)
        try source.revokeSessions(of: "z", reason: "gone", now: 10_500)
        _ = try source.setPresenceSharing(.nobody, of: "o")
        // Who is online is each node's own, not copied.
        _ = try source.cameOnline("o", node: "n1", now: 11)
        let pack = try PackArchives.zip(PackArchives.files())
        try source.addPack(try ResourcePack(archive: pack), bytes: pack, now: 12)
        try source.askLog(LogRequest(id: "l1", since: 1, until: 9, reason: "support"), of: "o", now: 13)
        _ = try source.deliverLog("l1", of: "o", media: "u1", now: 14)
        guard case .held(let heldMessage, new: true) = held else {
            Issue.record("the message was not held: \(held)")
            return
        }

        let database = try await StoreBackend.postgres.place()
        let target = try StoreBackend.postgres.open(database)
        let counts = try source.copy(to: target)
        #expect(counts.map(\.rows) == [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "\(counts)")
        #expect(throws: (any Error).self) { try source.copy(to: target) }
        let back = try await StoreBackend.sqlite.place()
        defer { StoreBackend.sqlite.discard(back) }
        let returned = try StoreBackend.sqlite.open(back)
        try target.copy(to: returned)
        for store in [target, returned] {
            let loaded = try #require(try store.loadRoom("r", now: 0))
            #expect(loaded.stored == stored && loaded.bans == ["u": 500] && loaded.lastMsgId == 1 && loaded.attributes == mood)
            #expect(try store.history(room: "r", before: nil, limit: 5) == [message])
            #expect(try store.rememberedReply(user: "o", rid: "x", since: 0) == reply)
            #expect(try store.messages(in: "g", after: 0, limit: 5).map(\.featuredAt) == [9, nil])
            #expect(try store.search("room", for: "o", limit: 5).map(\.seq) == [posted.seq])
            #expect(try store.publicGroups(matching: "شيء", offset: 0, limit: 5).map(\.about) == ["كل شيء"])
            #expect(try store.membership("g", user: "o")?.mutedUntil == 99)
            #expect(try store.joinRequests(of: "g").map(\.note) == ["hi"])
            #expect(try store.heldMessages(after: nil, limit: 5) == [heldMessage])
            #expect(try store.conversation("g", for: "o")?.title == "أصدقاء")
            #expect(try store.blocked(by: "o") == ["x"])
            #expect(try store.revocation(of: "z") == Store.Revocation(at: 10_500, reason: "gone"))
            #expect(try store.presenceSharing(of: "o") == .nobody && store.presenceNodes(missingFrom: [], before: .max).isEmpty)
            #expect(try store.packCatalogue().map(\.manifest.id) == ["classic"] && store.packBytes(ResourcePack.sha256(pack), in: 0..<pack.count) == pack)
            #expect(try store.bytes(of: "u1", in: 0..<4) == [1, 2, 3, 4] && store.upload("u1")?.isComplete == true && store.mayRead("u1", user: "o"))
            #expect(try store.giftLeaders(room: "r", since: 0, until: .max, limit: 5).receivers == [GiftTally(user: "u", count: 5)])
            #expect(try store.logRequest("l1") == Store.LogRequestRecord(request: LogRequest(id: "l1", since: 1, until: 9, reason: "support"), user: "o", askedAt: 13, media: "u1", deliveredAt: 14))
            try store.commit(room: "r", effects: [], state: stored, events: [WebhookEvent(type: "room.updated", room: "r", time: 5, data: [:])], endpoints: endpoints)
            let records = try store.webhookRecords(state: nil, room: "r", after: nil, limit: 10)
            #expect(records.map(\.seq) == [1, 2] && records.map(\.cursor) == [1, 2], "\(records)")
        }
    }

    @Test(arguments: StoreBackend.allCases) func giftsCountOncePerKeyAndLeadByItems(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        let stored = RoomEngine(id: "r", settings: RoomSettings(title: "T"), owner: "o", now: 1).stored
        let pack = String(repeating: "ab", count: 32)
        func gift(_ from: String, _ to: String, _ count: Int, at ts: Int64) -> Gift {
            Gift(from: from, fromName: from, to: to, index: nil, pack: pack, item: "rose", count: count, ts: ts)
        }
        for (room, gift, key) in [
            ("r", gift("a", "x", 3, at: 10), "k1"), ("r", gift("a", "x", 3, at: 10), "k1"), ("r", gift("b", "y", 2, at: 20), "k2"),
            ("r", gift("b", "x", 2, at: 30), "k3"), ("other", gift("c", "x", 50, at: 20), "k1"),
        ] {
            try store.commit(room: room, effects: [.storeGift(gift, key: key)], state: stored, events: [], endpoints: [])
        }
        let all = try store.giftLeaders(room: "r", since: 0, until: .max, limit: 10)
        #expect(all.givers == [GiftTally(user: "b", count: 4), GiftTally(user: "a", count: 3)])
        #expect(all.receivers == [GiftTally(user: "x", count: 5), GiftTally(user: "y", count: 2)])
        let early = try store.giftLeaders(room: "r", since: 10, until: 30, limit: 1)
        #expect(early.givers == [GiftTally(user: "a", count: 3)] && early.receivers == [GiftTally(user: "x", count: 3)])
        // Gone with their room.
        try store.deleteRoom("r")
        #expect(try store.giftLeaders(room: "r", since: 0, until: .max, limit: 10).givers.isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func logRequestsWaitForTheirUserAndAreDeliveredOnce(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        try store.askLog(LogRequest(id: "l1", since: 0, until: 10), of: "omar", now: 100)
        try store.askLog(LogRequest(id: "l2", since: 5, until: 20, reason: "لماذا"), of: "omar", now: 200)
        try store.askLog(LogRequest(id: "l3", since: 0, until: 10), of: "huda", now: 150)
        #expect(try store.pendingLogRequests(of: "omar", since: 0).map(\.id) == ["l1", "l2"])
        #expect(try store.pendingLogRequests(of: "omar", since: 150) == [LogRequest(id: "l2", since: 5, until: 20, reason: "لماذا")])
        // Another's request is not delivered; the first delivery stays.
        #expect(try store.deliverLog("l1", of: "huda", media: "u9", now: 300) == nil)
        #expect(try store.deliverLog("l1", of: "omar", media: "u1", now: 300)?.media == "u1")
        #expect(try store.deliverLog("l1", of: "omar", media: "u2", now: 400)?.deliveredAt == 300)
        #expect(try store.logRequest("l1")?.media == "u1")
        #expect(try store.pendingLogRequests(of: "omar", since: 0).map(\.id) == ["l2"])
        #expect(try store.logRequest("nope") == nil)
    }

    @Test(arguments: StoreBackend.allCases) func chatIsStoredOncePerClientIdAndPagesNewestFirst(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
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
    @Test(arguments: StoreBackend.allCases) func chatRetentionByCountAndAge(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
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
    @Test(arguments: StoreBackend.allCases) func webhookOutboxKeepsEachRoomInOrder(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
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

    /// Two nodes on one outbox read the same due delivery: one claim lands, the other is
    /// refused, and the lane shows nothing due until the claim runs out (a node that died while
    /// posting leaves it to be tried again then).
    @Test(arguments: StoreBackend.allCases) func oneNodeClaimsEachDelivery(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let first = try backend.open(place)
        let second = try backend.open(place)
        let stored = RoomEngine(id: "r", settings: RoomSettings(), owner: "o", now: 0).stored
        let events = (1...2).map { WebhookEvent(type: "member.joined", room: "r", time: Int64($0), data: [:]) }
        try first.commit(room: "r", effects: [], state: stored, events: events, endpoints: ["http://a/hooks"])
        let seenByFirst = try #require(try first.dueWebhooks(now: 10, limit: 10).first)
        let seenBySecond = try #require(try second.dueWebhooks(now: 10, limit: 10).first)
        #expect(seenByFirst == seenBySecond)
        #expect(try first.claimWebhook(seenByFirst, until: 5_000))
        #expect(try !second.claimWebhook(seenBySecond, until: 5_000))
        #expect(try second.dueWebhooks(now: 4_999, limit: 10).isEmpty)
        let again = try #require(try second.dueWebhooks(now: 5_000, limit: 10).first)
        #expect(again.eventId == seenByFirst.eventId)
        #expect(try second.claimWebhook(again, until: 9_000))
        try second.webhookDelivered(again, at: 5_001)
        #expect(try first.dueWebhooks(now: 5_001, limit: 10).first?.body.contains(#""seq":2"#) == true)
    }
}
