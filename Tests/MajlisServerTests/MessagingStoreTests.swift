import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Conversations in the store, the same on SQLite and PostgreSQL.
@Suite struct MessagingStoreTests {
    static let huda = UserRef(id: "huda", name: "Huda")
    static let omar = UserRef(id: "omar", name: "Omar")

    static func text(_ text: String, _ client: String) -> MessageDraft { MessageDraft(text: text, clientMsgId: client) }

    @Test(arguments: StoreBackend.allCases) func messagesAreNumberedWithoutGapsAndPostedOncePerClientId(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        let direct = "d-test"
        var seqs: [Int64] = []
        for index in 1...5 {
            let sender = index.isMultiple(of: 2) ? Self.omar : Self.huda
            guard case .posted(let message, _) = try store.post(Self.text("m\(index)", "c\(index)"), in: direct, from: sender, direct: ("huda", "omar"), now: Int64(index)) else {
                Issue.record("message \(index) was not posted")
                return
            }
            seqs.append(message.seq)
        }
        #expect(seqs == [1, 2, 3, 4, 5])
        // The same client id again from the same sender is the message it became; from the
        // other member it is a new message.
        #expect(try store.post(Self.text("again", "c5"), in: direct, from: Self.huda, now: 9) == .duplicate(try store.messages(in: direct, after: 4, limit: 1)[0]))
        guard case .posted(let sixth, _) = try store.post(Self.text("again", "c5"), in: direct, from: Self.omar, now: 9) else {
            Issue.record("the other member's message was not posted")
            return
        }
        #expect(sixth.seq == 6)
        #expect(try store.post(Self.text("x", "z"), in: direct, from: UserRef(id: "eve", name: "Eve"), now: 9) == .notMember)
        #expect(try store.messages(in: direct, after: 2, limit: 2).map(\.text) == ["m3", "m4"])

        // Each sender has read what it sent; the read mark moves forward only, and not past the newest.
        let huda = try #require(try store.conversation(direct, for: "huda"))
        #expect(huda.kind == .direct && huda.peer == "omar" && huda.readSeq == 5 && huda.unread == 1 && huda.lastMessage?.seq == 6)
        #expect(try store.markRead(direct, user: "huda", seq: 99) == 6)
        #expect(try store.markRead(direct, user: "huda", seq: 3) == nil)
        #expect(try store.totalUnread(of: "huda") == 0)
        #expect(try store.totalUnread(of: "omar") == 0)
    }

    @Test(arguments: StoreBackend.allCases) func groupsListUnreadAndMembers(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        try store.createGroup("g-a", title: "A", owner: "huda", members: ["omar"], now: 1)
        try store.createGroup("g-b", title: "B", owner: "omar", members: ["huda", "omar"], now: 2)
        for index in 1...3 { _ = try store.post(Self.text("m\(index)", "c\(index)"), in: "g-a", from: Self.omar, now: 10) }
        _ = try store.post(Self.text("b", "c"), in: "g-b", from: Self.omar, now: 11)
        #expect(try store.totalUnread(of: "huda") == 4)
        try store.setSettings("g-b", user: "huda", muted: true, pinned: nil)
        #expect(try store.totalUnread(of: "huda") == 3)  // a muted conversation counts no more

        let first = try store.conversations(of: "huda", after: nil, limit: 1)
        #expect(first.map(\.id) == ["g-a"] && first[0].role == .owner && first[0].memberCount == 2 && first[0].unread == 3)
        let second = try store.conversations(of: "huda", after: "g-a", limit: 5)
        #expect(second.map(\.id) == ["g-b"] && second[0].muted && second[0].role == .member && second[0].title == "B")

        // Someone added late has read nothing before, and sees none of it as unread.
        #expect(try store.addMembers("g-a", users: ["zaid", "omar"], now: 20) == ["zaid"])
        #expect(try store.conversation("g-a", for: "zaid")?.unread == 0)
        #expect(try store.members(of: "g-a").map(\.user) == ["huda", "omar", "zaid"])
        try store.setOwner("g-a", user: "zaid")
        #expect(try store.membership("g-a", user: "zaid")?.role == .owner)
        #expect(try store.removeMember("g-a", user: "omar"))
        #expect(!(try store.removeMember("g-a", user: "omar")))
        #expect(try store.memberCount(of: "g-a") == 2)
        try store.deleteConversation("g-a")
        #expect(try store.conversation("g-a", for: "huda") == nil && (try store.messages(in: "g-a", after: 0, limit: 5)).isEmpty)
    }

    /// Search finds a member's messages by the words people type, in Arabic, Chinese, Japanese
    /// and English, in their own conversations only; an edit is found by its new words, a
    /// revoked message no more; a copy into another store (another kind of index) finds the same.
    @Test(arguments: StoreBackend.allCases) func messagesAreFoundByTheirWords(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        try store.createGroup("g-a", title: "A", owner: "huda", members: ["omar"], now: 1)
        try store.createGroup("g-b", title: "B", owner: "omar", members: ["sara"], now: 1)
        let texts = [
            "g-a": ["مرحبا، أين الكتابُ؟", "我们明天在北京见面", "東京タワーで会いましょう", "The Café opens at nine", "Hello there"],
            "g-b": ["hello from the other group"],
        ]
        for (id, messages) in texts.sorted(by: { $0.key < $1.key }) {
            for (index, text) in messages.enumerated() {
                _ = try store.post(Self.text(text, "\(id)-\(index)"), in: id, from: Self.omar, now: Int64(10 + index))
            }
        }
        func found(_ query: String, _ user: String = "huda", in conversation: String? = nil, after: Store.SearchPosition? = nil) throws -> [String] {
            try store.search(query, for: user, in: conversation, after: after, limit: 10).map { $0.text ?? "" }
        }
        #expect(try found("كتاب") == ["مرحبا، أين الكتابُ؟"])
        #expect(try found("اين") == ["مرحبا، أين الكتابُ؟"])
        #expect(try found("北京") == ["我们明天在北京见面"])
        #expect(try found("明天 见面") == ["我们明天在北京见面"])
        #expect(try found("タワー") == ["東京タワーで会いましょう"])
        #expect(try found("東京") == ["東京タワーで会いましょう"])
        #expect(try found("cafe NINE") == ["The Café opens at nine"])
        #expect(try found("hel") == ["Hello there"])  // huda is not in g-b
        #expect(try found("hello", "omar") == ["Hello there", "hello from the other group"])  // newest first
        #expect(try found("hello", "omar", in: "g-a") == ["Hello there"])
        let newest = try #require(try store.search("hello", for: "omar", limit: 1).first)
        #expect(try found("hello", "omar", after: Store.SearchPosition(newest)) == ["hello from the other group"])
        #expect(try found("京都") == [])
        #expect(try found("hello", "eve") == [])

        try store.editMessage(5, in: "g-a", text: "Goodbye there", now: 20)
        #expect(try found("hello") == [] && found("goodbye") == ["Goodbye there"])
        try store.revokeMessage(4, in: "g-a", by: "omar")
        #expect(try found("cafe") == [])
        // A card is found by its fallback.
        let card = MessageDraft(type: "invite", text: nil, payload: ["room": "hall"], fallback: "Join my room", clientMsgId: "card")
        _ = try store.post(card, in: "g-a", from: Self.omar, now: 30)
        #expect(try store.search("room", for: "huda", limit: 10).map(\.seq) == [6])
        do {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-search-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let copy = try Store(directory: directory)
            try store.copy(to: copy)
            #expect(try copy.search("北京", for: "huda", limit: 10).map(\.seq) == [2])
        }
    }

    /// Public groups are listed largest first, found by the words of their title and about,
    /// and leave the list when made private; join requests are kept once per user.
    @Test(arguments: StoreBackend.allCases) func publicGroupsAreListedAndFound(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        try store.createGroup("g-a", title: "Hiking club", owner: "huda", members: [], access: .open, about: "山歩き 北海道", now: 1)
        try store.createGroup("g-b", title: "نادي الكتاب", owner: "omar", members: ["sara", "zaid"], access: .request, now: 2)
        try store.createGroup("g-c", title: "Hiking family", owner: "sara", members: [], now: 3)
        #expect(try store.publicGroups(matching: nil, offset: 0, limit: 10).map(\.id) == ["g-b", "g-a"])
        #expect(try store.publicGroups(matching: nil, offset: 1, limit: 10).map(\.id) == ["g-a"])
        #expect(try store.publicGroups(matching: "hik", offset: 0, limit: 10).map(\.id) == ["g-a"])
        #expect(try store.publicGroups(matching: "北海道", offset: 0, limit: 10).map(\.id) == ["g-a"])
        #expect(try store.publicGroups(matching: "الكتاب", offset: 0, limit: 10).first?.memberCount == 3)
        #expect(try store.publicGroups(matching: "club family", offset: 0, limit: 10).isEmpty)
        try store.updateGroup("g-a", title: nil, about: nil, access: .private)
        #expect(try store.publicGroups(matching: nil, offset: 0, limit: 10).map(\.id) == ["g-b"])
        try store.updateGroup("g-c", title: "Mountain family", about: nil, access: .open)
        #expect(try store.publicGroups(matching: "mountain", offset: 0, limit: 10).map(\.id) == ["g-c"])

        #expect(try store.addJoinRequest(JoinRequest(conversation: "g-b", user: "eve", name: "Eve", note: "hi", at: 5)))
        #expect(try !store.addJoinRequest(JoinRequest(conversation: "g-b", user: "eve", name: "Eve", note: "hello", at: 6)))
        #expect(try store.joinRequests(of: "g-b") == [JoinRequest(conversation: "g-b", user: "eve", name: "Eve", note: "hello", at: 5)])
        #expect(try store.removeJoinRequest("g-b", user: "eve") && store.joinRequests(of: "g-b").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func blocksAndStrangersAreToldApart(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        let direct = "d-pair"
        _ = try store.post(Self.text("hi", "c1"), in: direct, from: Self.huda, direct: ("huda", "omar"), now: 1)
        _ = try store.post(Self.text("hi again", "c2"), in: direct, from: Self.huda, now: 2)
        #expect(try store.acquaintance(of: "huda", with: "omar", direct: direct) == Store.Acquaintance(sent: 2))
        #expect(try store.peer(in: direct, of: "huda") == "omar")
        _ = try store.post(Self.text("who is this", "o1"), in: direct, from: Self.omar, now: 3)
        #expect(try store.acquaintance(of: "huda", with: "omar", direct: direct).answered)
        #expect(try store.block("huda", by: "omar", now: 4))
        #expect(!(try store.block("huda", by: "omar", now: 5)))
        let blocked = try store.acquaintance(of: "huda", with: "omar", direct: direct)
        #expect(blocked.blocked && !blocked.blocks)
        #expect(try store.acquaintance(of: "omar", with: "huda", direct: direct).blocks)
        #expect(try store.blocked(by: "omar") == ["huda"])
        #expect(try store.unblock("huda", by: "omar"))
        #expect(try store.blocked(by: "omar").isEmpty)
        try store.createGroup("g-1", title: "G", owner: "zaid", members: ["huda", "omar"], now: 6)
        #expect(try store.acquaintance(of: "huda", with: "omar", direct: direct).shareGroup)
        #expect(try store.peer(in: "g-1", of: "huda") == nil)
    }
}
