import Foundation
import MajlisKit
import MajlisTestSupport
import Synchronization
import Testing

/// The SDK's conversations on a fake server: listed and synced at start, followed by events
/// (a gap syncs), sends pending until stored and retried with the same client id.
@Suite struct MessengerTests {
    static func json(_ value: some Encodable) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))) ?? .null
    }

    static func message(_ seq: Int64, from user: String = "omar", in conversation: String = "d-1") -> ConversationMessage {
        ConversationMessage(conversation: conversation, seq: seq, from: UserRef(id: user, name: user), text: "m\(seq)", ts: 1_000 + seq, clientMsgId: "c\(seq)")
    }

    /// Whether the fake server refuses sends now.
    final class Failing: Sendable {
        private let state = Mutex(false)
        var now: Bool { state.withLock { $0 } }
        func set(_ failing: Bool) { state.withLock { $0 = failing } }
    }

    /// The newest message the fake server holds.
    final class Held: Sendable {
        private let state: Mutex<Int64>
        init(_ seq: Int64) { state = Mutex(seq) }
        var last: Int64 { state.withLock { $0 } }
        func next() -> Int64 {
            state.withLock { value in
                value += 1
                return value
            }
        }
    }

    /// A fake server holding one direct conversation with `stored` messages, read up to `read`.
    static func server(stored: Int64, read: Int64, sendFails: Failing = Failing()) -> FakeSignalingClient {
        let held = Held(stored)
        return FakeSignalingClient(user: "huda") { op, args in
            let last = held.last
            switch op {
            case "conv.list":
                let summary = ConversationSummary(
                    id: "d-1", kind: .direct, peer: "omar", role: .member, memberCount: 2, lastSeq: last, lastMessage: last > 0 ? message(last) : nil,
                    readSeq: read, createdAt: 1, updatedAt: 1_000 + last)
                return .success(["conversations": [json(summary)], "more": false, "unread": .int(last - read)])
            case "msg.sync":
                let after = args["after"]?.intValue ?? 0
                let page = (after + 1...max(after + 1, last)).filter { $0 <= last }.prefix(200).map { json(message($0)) }
                return .success(["messages": .array(page), "more": false])
            case "msg.send":
                if sendFails.now { return .failure(ProtocolError(.internal, "the store is down")) }
                let seq = held.next()
                return .success(["conversation": "d-1", "seq": .int(seq), "ts": .int(5_000 + seq)])
            default:
                return .success([:])
            }
        }
    }

    @Test func startListsTheConversationsAndSyncsEach() async throws {
        let fake = Self.server(stored: 3, read: 1)
        let messenger = Messenger(signaling: fake)
        try await messenger.start()
        let state = await messenger.state
        #expect(state.synced && state.messages["d-1"]?.map(\.seq) == [1, 2, 3])
        #expect(state.unread == 2 && state.ordered.map(\.id) == ["d-1"])
        #expect(fake.lastArgs(of: "msg.sync")?["after"] == 0)
    }

    @Test func eventsAreAppliedInOrderAndAGapIsSynced() async throws {
        let fake = Self.server(stored: 3, read: 3)
        let messenger = Messenger(signaling: fake)
        try await messenger.start()
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .messageNew(Self.message(4)))))
        #expect(await eventually { await messenger.state.lastSeq("d-1") == 4 })
        #expect(await messenger.state.unread == 1)
        // Messages 5 and 6 were missed: 7 syncs them first (the fake server now holds 7).
        fake.respond { op, args in
            guard op == "msg.sync" else { return .success([:]) }
            let after = args["after"]?.intValue ?? 0
            return .success(["messages": .array((after + 1...7).map { Self.json(Self.message($0)) }), "more": false])
        }
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .messageNew(Self.message(7)))))
        #expect(await eventually { await messenger.state.messages["d-1"]?.map(\.seq) == Array(1...7) })
        #expect(await messenger.state.unread == 4)
        // Typing shows, a message from the typist ends it; an edit replaces the message.
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .typing(conversation: "d-1", user: "omar", until: 0))))
        #expect(await eventually { await !messenger.state.typing(in: "d-1", now: SystemClock().now()).isEmpty })
        var edited = Self.message(7)
        edited.text = "edited"
        edited.editedAt = 9_000
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .messageUpdated(edited))))
        #expect(await eventually { await messenger.state.messages["d-1"]?.last?.text == "edited" })
        #expect(await messenger.state.conversations["d-1"]?.lastMessage?.editedAt == 9_000)
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .conversationRemoved(conversation: "d-1", by: "huda", reason: "left"))))
        #expect(await eventually {
            let state = await messenger.state
            return state.conversations.isEmpty && state.messages.isEmpty
        })
    }

    @Test func aSendIsPendingUntilStoredAndARetryKeepsItsClientId() async throws {
        let fails = Failing()
        fails.set(true)
        let fake = Self.server(stored: 1, read: 1, sendFails: fails)
        let messenger = Messenger(signaling: fake)
        try await messenger.start()
        let draft = MessageDraft(text: "are you there?", clientMsgId: "mine-1")
        await #expect(throws: MajlisError.self) { try await messenger.send(draft, to: .conversation("d-1")) }
        let failed = await messenger.state.pending
        #expect(failed.count == 1 && failed.first?.id == "mine-1")
        guard case .failed? = failed.first?.status else {
            Issue.record("not failed: \(failed)")
            return
        }
        fails.set(false)
        let sent = try #require(try await messenger.retry("mine-1"))
        #expect(sent.seq == 2 && sent.clientMsgId == "mine-1" && fake.lastArgs(of: "msg.send")?["clientMsgId"] == "mine-1")
        let state = await messenger.state
        #expect(state.pending.isEmpty && state.messages["d-1"]?.last?.text == "are you there?")
        // Sending marks the conversation read up to what was sent.
        #expect(state.conversations["d-1"]?.readSeq == 2 && state.unread == 0)
    }

    /// A message the server holds for review stays pending as held: released, it arrives as a
    /// message of the conversation and is pending no more; rejected, it shows so.
    @Test func aHeldMessageWaitsForItsReview() async throws {
        let fake = Self.server(stored: 1, read: 1)
        let messenger = Messenger(signaling: fake)
        try await messenger.start()
        fake.respond { op, args in
            guard op == "msg.send" else { return .success([:]) }
            let held: JSONValue = .string("h-" + (args["clientMsgId"]?.stringValue ?? ""))
            return .success(["conversation": "d-1", "held": held, "ts": 5_000])
        }
        #expect(try await messenger.send(MessageDraft(text: "hello?", clientMsgId: "mine-1"), to: .user("omar")) == nil)
        #expect(try await messenger.send(MessageDraft(text: "buy now", clientMsgId: "mine-2"), to: .user("omar")) == nil)
        #expect(await messenger.state.pending.map(\.status) == [.held(id: "h-mine-1"), .held(id: "h-mine-2")])
        // Released: the user's own message arrives with its client id.
        let released = ConversationMessage(conversation: "d-1", seq: 2, from: UserRef(id: "huda", name: "huda"), text: "hello?", ts: 6_000, clientMsgId: "mine-1")
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .messageNew(released))))
        #expect(await eventually { await messenger.state.messages["d-1"]?.last?.text == "hello?" })
        fake.emit(.event(EventFrame(room: nil, seq: nil, event: .messageRejected(conversation: "d-1", clientMsgId: "mine-2", reason: "spam"))))
        #expect(await eventually { await messenger.state.pending.map(\.status) == [.rejected("spam")] })
    }

    /// The conversations are kept on the device: an app started again shows them before it
    /// connects, and a message it could not send before it was killed is sent once it starts,
    /// under its client id; a damaged file or another user's conversations are not shown.
    @Test func anAppStartedAgainShowsItsConversationsAndSendsWhatWasPending() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-messenger-\(UUID().uuidString)/state.json").path
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let fails = Failing()
        fails.set(true)
        let first = Messenger(signaling: Self.server(stored: 3, read: 1, sendFails: fails), store: FileMessengerStore(path: path))
        try await first.start()
        await #expect(throws: MajlisError.self) { try await first.send(MessageDraft(text: "still there?", clientMsgId: "mine-9"), to: .conversation("d-1")) }
        await first.save()
        // The app is killed; started again, offline: what it held is there at once.
        fails.set(false)
        let fake = Self.server(stored: 3, read: 1, sendFails: fails)
        let again = Messenger(signaling: fake, store: FileMessengerStore(path: path))
        let offline = await again.state
        #expect(offline.messages["d-1"]?.map(\.seq) == [1, 2, 3] && offline.unread == 2 && offline.pending.map(\.id) == ["mine-9"])
        try await again.start()
        let state = await again.state
        #expect(state.pending.isEmpty && state.messages["d-1"]?.last?.text == "still there?", "\(state.pending)")
        #expect(fake.lastArgs(of: "msg.send")?["clientMsgId"] == "mine-9")
        #expect(FileMessengerStore(path: path).load()?.pending == [])

        // Another user on this device: the saved conversations are not theirs.
        let other = FakeSignalingClient(user: "zaid") { _, _ in .success(["conversations": [], "more": false, "unread": 0]) }
        let theirs = Messenger(signaling: other, store: FileMessengerStore(path: path))
        try await theirs.start()
        let theirState = await theirs.state
        #expect(theirState.conversations.isEmpty && theirState.messages.isEmpty)
        // A damaged file: started as new, nothing traps.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(FileMessengerStore(path: path).load() == nil)
        #expect(await Messenger(signaling: Self.server(stored: 0, read: 0), store: FileMessengerStore(path: path)).state == MessengerState())
    }

    @Test func readingMarksTheConversationReadOnTheServer() async throws {
        let fake = Self.server(stored: 5, read: 2)
        let messenger = Messenger(signaling: fake)
        try await messenger.start()
        try await messenger.markRead("d-1")
        #expect(fake.lastArgs(of: "msg.read")?["seq"] == 5)
        #expect(await messenger.state.unread == 0)
    }
}
