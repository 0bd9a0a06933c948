import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Presence of contacts in the store, the same on SQLite and PostgreSQL: who is a contact, who
/// is online on which node, and what each viewer may see.
@Suite struct PresenceStoreTests {
    typealias Messages = MessagingStoreTests

    @Test(arguments: StoreBackend.allCases) func contactsAreThoseWhoWroteToEachOtherAndDoNotBlock(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        _ = try store.post(Messages.text("hi", "h1"), in: "d-ho", from: Messages.huda, direct: ("huda", "omar"), now: 1)
        // Written to, unanswered: not a contact yet.
        #expect(try store.contacts(of: "huda").isEmpty && store.contacts(of: "omar").isEmpty)
        _ = try store.post(Messages.text("hello", "o1"), in: "d-ho", from: Messages.omar, now: 2)
        #expect(try store.contacts(of: "huda") == ["omar"] && store.contacts(of: "omar") == ["huda"])
        // A group shared is not a contact.
        try store.createGroup("g-1", title: "G", owner: "zaid", members: ["huda"], now: 3)
        _ = try store.post(Messages.text("all", "z1"), in: "g-1", from: UserRef(id: "zaid", name: "Zaid"), now: 4)
        #expect(try store.contacts(of: "huda") == ["omar"])
        _ = try store.block("huda", by: "omar", now: 5)
        #expect(try store.contacts(of: "huda").isEmpty && store.contacts(of: "omar").isEmpty)
        _ = try store.unblock("huda", by: "omar")
        #expect(try store.contacts(of: "omar") == ["huda"])
    }

    @Test(arguments: StoreBackend.allCases) func aUserIsOnlineWhileAnyLiveNodeHasThem(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        _ = try store.post(Messages.text("hi", "h1"), in: "d-ho", from: Messages.huda, direct: ("huda", "omar"), now: 1)
        _ = try store.post(Messages.text("hello", "o1"), in: "d-ho", from: Messages.omar, now: 2)
        // Never seen: offline, no time.
        #expect(try store.presence(of: ["huda", "zaid"], seenBy: "omar") == [UserPresence(user: "huda", online: false)])
        #expect(try store.cameOnline("huda", node: "n1", now: 10))
        #expect(!(try store.cameOnline("huda", node: "n2", now: 11)))
        #expect(try store.presence(of: ["huda"], seenBy: "omar") == [UserPresence(user: "huda", online: true)])
        #expect(!(try store.wentOffline("huda", node: "n1", now: 20)))
        #expect(try store.wentOffline("huda", node: "n2", now: 21))
        #expect(try store.presence(of: ["huda"], seenBy: "omar") == [UserPresence(user: "huda", online: false, lastSeen: 21)])

        // A node that is gone: until its sessions are forgotten they count; then clearing them
        // says who is offline now.
        #expect(try store.cameOnline("huda", node: "n1", now: 30))
        #expect(try store.cameOnline("omar", node: "n1", now: 31))
        #expect(!(try store.cameOnline("omar", node: "n2", now: 32)))
        #expect(try store.presenceNodes(missingFrom: ["n2"], before: 100) == ["n1"])
        #expect(try store.presenceNodes(missingFrom: ["n2"], before: 31).isEmpty, "a node with a session begun since is not taken for gone")
        #expect(try store.clearPresence(of: "n1", now: 40) == ["huda"])
        #expect(try store.presence(of: ["huda"], seenBy: "omar") == [UserPresence(user: "huda", online: false, lastSeen: 40)])
        #expect(try store.presence(of: ["omar"], seenBy: "huda") == [UserPresence(user: "omar", online: true)])

        // Shared with nobody: hidden, online or not.
        #expect(try store.presenceSharing(of: "omar") == .contacts)
        #expect(try store.setPresenceSharing(.nobody, of: "omar"))
        #expect(!(try store.setPresenceSharing(.nobody, of: "omar")))
        #expect(try store.presence(of: ["omar"], seenBy: "huda") == [UserPresence(user: "omar", online: false, hidden: true)])
        #expect(try store.setPresenceSharing(.contacts, of: "omar"))
        #expect(try store.presence(of: ["omar"], seenBy: "huda") == [UserPresence(user: "omar", online: true)])
    }
}
