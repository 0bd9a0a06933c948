@testable import MajlisServer
import MajlisProtocol
import Testing

/// Who may do what in a conversation, from a table of facts, without a store.
@Suite struct ConversationRulesTests {
    typealias Facts = ConversationRules.Facts

    static func member(_ role: Role, kind: ConversationKind = .group, lastSeq: Int64 = 5, mutedUntil: Int64 = 0) -> Store.Membership {
        Store.Membership(kind: kind, role: role, readSeq: 0, lastSeq: lastSeq, mutedUntil: mutedUntil)
    }

    /// A group as anyone sees it, with `members`.
    static func group(_ access: GroupAccess, members: Int = 2, kind: ConversationKind = .group) -> ConversationInfo {
        ConversationInfo(id: "g", kind: kind, title: "t", owner: "o", memberCount: members, lastSeq: 0, createdAt: 1, updatedAt: 1, access: access)
    }

    static let text = MessageDraft(text: "hi", clientMsgId: "c")
    static let now: Int64 = 10_000_000

    /// Message 3, sent `ago` ms before `now` by `sender`.
    static func message(by sender: String = "me", ago: Int64, type: String = "text", revokedBy: String? = nil) -> ConversationMessage {
        ConversationMessage(
            conversation: "g", seq: 3, from: UserRef(id: sender, name: sender), type: type, text: "hi", fallback: type == "text" ? nil : "a card",
            ts: now - ago, clientMsgId: "c", revokedBy: revokedBy)
    }

    static let cases: [(MessagingCommand, Facts, ErrorCode?)] = [
        (.createGroup(title: "t", members: ["a", "b"]), Facts(), nil),
        (.createGroup(title: "t", members: ["a", "b", "c"]), Facts(), .forbidden),  // 4 with the owner, over 3
        (.createGroup(title: "t", members: ["a", "b", "me"]), Facts(), nil),  // the owner named again counts once
        (.send(.user("me"), text), Facts(), .badRequest),
        (.send(.user("omar"), text), Facts(), nil),
        (.send(.conversation("g"), text), Facts(), .conversationNotFound),
        (.send(.conversation("g"), text), Facts(caller: member(.member)), nil),
        (.send(.conversation("g"), MessageDraft(text: "re", replyTo: 6, clientMsgId: "c")), Facts(caller: member(.member)), .badRequest),
        (.send(.conversation("g"), MessageDraft(text: "re", replyTo: 5, clientMsgId: "c")), Facts(caller: member(.member)), nil),
        (.sync(conversation: "g", after: 0, limit: 10), Facts(), .conversationNotFound),
        (.read(conversation: "g", seq: 3), Facts(caller: member(.member)), nil),
        (.invite(conversation: "g", users: ["x"]), Facts(caller: member(.member), members: 2, newcomers: 1), .forbidden),
        (.invite(conversation: "g", users: ["x"]), Facts(caller: member(.admin), members: 2, newcomers: 1), nil),
        (.invite(conversation: "g", users: ["x", "y"]), Facts(caller: member(.owner), members: 2, newcomers: 2), .forbidden),
        (.invite(conversation: "d", users: ["x"]), Facts(caller: member(.member, kind: .direct)), .badRequest),
        (.remove(conversation: "g", user: "x"), Facts(caller: member(.owner), target: member(.admin)), nil),
        (.remove(conversation: "g", user: "x"), Facts(caller: member(.admin), target: member(.member)), nil),
        (.remove(conversation: "g", user: "x"), Facts(caller: member(.admin), target: member(.admin)), .forbidden),
        (.remove(conversation: "g", user: "x"), Facts(caller: member(.member), target: member(.member)), .forbidden),
        (.remove(conversation: "g", user: "x"), Facts(caller: member(.owner)), .badRequest),
        (.remove(conversation: "g", user: "me"), Facts(caller: member(.owner), target: member(.owner)), .badRequest),
        (.leave(conversation: "g"), Facts(caller: member(.member)), nil),
        (.leave(conversation: "d"), Facts(caller: member(.member, kind: .direct)), .badRequest),
        (.update(conversation: "g", title: "t", about: nil, access: nil), Facts(caller: member(.member)), .forbidden),
        (.update(conversation: "g", title: nil, about: nil, access: .open), Facts(caller: member(.admin)), nil),
        (.update(conversation: "d", title: "t", about: nil, access: nil), Facts(caller: member(.member, kind: .direct)), .badRequest),
        // Public groups: found by anyone, joined at once or on request; private ones are not there.
        (.discover(query: nil, cursor: nil, limit: 20), Facts(), nil),
        (.join(conversation: "g", note: nil), Facts(group: group(.open)), nil),
        (.join(conversation: "g", note: nil), Facts(group: group(.open, members: 3)), .forbidden),  // full (3)
        (.join(conversation: "g", note: nil), Facts(group: group(.request, members: 3)), nil),  // asking is not joining
        (.join(conversation: "g", note: nil), Facts(group: group(.private)), .conversationNotFound),
        (.join(conversation: "d", note: nil), Facts(group: group(.private, kind: .direct)), .conversationNotFound),
        (.join(conversation: "g", note: nil), Facts(), .conversationNotFound),
        (.join(conversation: "g", note: nil), Facts(caller: member(.member), group: group(.private)), nil),  // a member already
        (.requests(conversation: "g"), Facts(caller: member(.member)), .forbidden),
        (.requests(conversation: "g"), Facts(caller: member(.admin)), nil),
        (.answerRequest(conversation: "g", user: "x", accept: true), Facts(caller: member(.admin), members: 2, requested: true), nil),
        (.answerRequest(conversation: "g", user: "x", accept: true), Facts(caller: member(.admin), members: 3, requested: true), .forbidden),
        (.answerRequest(conversation: "g", user: "x", accept: false), Facts(caller: member(.admin), members: 3, requested: true), nil),
        (.answerRequest(conversation: "g", user: "x", accept: true), Facts(caller: member(.admin), members: 2), .badRequest),
        (.answerRequest(conversation: "g", user: "x", accept: true), Facts(caller: member(.member), members: 2, requested: true), .forbidden),
        // Muting members: the owner anyone but itself, an admin members; a muted member does not send.
        (.muteMember(conversation: "g", user: "x", seconds: 60), Facts(caller: member(.owner), target: member(.admin)), nil),
        (.muteMember(conversation: "g", user: "x", seconds: 60), Facts(caller: member(.admin), target: member(.member)), nil),
        (.muteMember(conversation: "g", user: "x", seconds: 60), Facts(caller: member(.admin), target: member(.admin)), .forbidden),
        (.muteMember(conversation: "g", user: "x", seconds: 60), Facts(caller: member(.admin), target: member(.owner)), .forbidden),
        (.muteMember(conversation: "g", user: "me", seconds: 60), Facts(caller: member(.owner), target: member(.owner)), .badRequest),
        (.muteMember(conversation: "g", user: "x", seconds: 60), Facts(caller: member(.owner)), .badRequest),
        (.send(.conversation("g"), text), Facts(caller: member(.member, mutedUntil: now + 1)), .forbidden),
        (.send(.conversation("g"), text), Facts(caller: member(.member, mutedUntil: now)), nil),
        // Featured messages: a group's owner and admins, a message not revoked.
        (.feature(conversation: "g", seq: 3, featured: true), Facts(caller: member(.admin), message: message(by: "omar", ago: 1)), nil),
        (.feature(conversation: "g", seq: 3, featured: true), Facts(caller: member(.member), message: message(by: "omar", ago: 1)), .forbidden),
        (.feature(conversation: "g", seq: 3, featured: true), Facts(caller: member(.owner), message: message(ago: 1, revokedBy: "me")), .badRequest),
        (.feature(conversation: "g", seq: 3, featured: true), Facts(caller: member(.owner)), .badRequest),
        (.setRole(conversation: "g", user: "x", role: .admin), Facts(caller: member(.admin), target: member(.member)), .forbidden),
        (.setRole(conversation: "g", user: "x", role: .admin), Facts(caller: member(.owner), target: member(.member)), nil),
        (.setRole(conversation: "g", user: "x", role: .member), Facts(caller: member(.owner), target: member(.owner)), .badRequest),
        (.settings(conversation: "g", muted: true, pinned: nil), Facts(), .conversationNotFound),
        // Edits: one's own text messages, within 15 minutes (the rules' default).
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.member), message: message(ago: 899_000)), nil),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.member), message: message(ago: 901_000)), .forbidden),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.owner), message: message(by: "omar", ago: 1)), .forbidden),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.member), message: message(ago: 1, type: "gift")), .badRequest),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.member), message: message(ago: 1, revokedBy: "me")), .badRequest),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(caller: member(.member)), .badRequest),
        (.edit(conversation: "g", seq: 3, text: "t"), Facts(), .conversationNotFound),
        // Revokes: one's own within 2 minutes; a group's owner and admins any, any time.
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.member), message: message(ago: 119_000)), nil),
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.member), message: message(ago: 121_000)), .forbidden),
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.member), message: message(by: "omar", ago: 1)), .forbidden),
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.admin), message: message(by: "omar", ago: 86_400_000)), nil),
        (.revoke(conversation: "d", seq: 3), Facts(caller: member(.member, kind: .direct), message: message(by: "omar", ago: 1)), .forbidden),
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.member), message: message(by: "omar", ago: 1, revokedBy: "omar")), nil),
        (.revoke(conversation: "g", seq: 3), Facts(caller: member(.member)), .badRequest),
        // Direct messages: blocks either way, and a stranger's first three.
        (.send(.user("omar"), text), Facts(peer: "omar", acquaintance: .init(sent: 2)), nil),
        (.send(.user("omar"), text), Facts(peer: "omar", acquaintance: .init(sent: 3)), .forbidden),
        (.send(.user("omar"), text), Facts(peer: "omar", acquaintance: .init(sent: 3, answered: true)), nil),
        (.send(.user("omar"), text), Facts(peer: "omar", acquaintance: .init(sent: 9, shareGroup: true)), nil),
        (.send(.user("omar"), text), Facts(peer: "omar", acquaintance: .init(blocks: true, answered: true)), .forbidden),
        (.send(.conversation("d"), text), Facts(caller: member(.member, kind: .direct), peer: "omar", acquaintance: .init(blocked: true, answered: true)), .forbidden),
        (.typing(conversation: "d"), Facts(caller: member(.member, kind: .direct), peer: "omar", acquaintance: .init(sent: 7)), nil),
        (.typing(conversation: "d"), Facts(caller: member(.member, kind: .direct), peer: "omar", acquaintance: .init(blocked: true)), .forbidden),
        (.report(conversation: "g", seq: 3, reason: ""), Facts(caller: member(.member), message: message(by: "omar", ago: 1)), nil),
        (.report(conversation: "g", seq: 3, reason: ""), Facts(caller: member(.member)), .badRequest),
        (.report(conversation: "g", seq: 3, reason: ""), Facts(), .conversationNotFound),
        (.block(user: "me"), Facts(), .badRequest),
        (.block(user: "omar"), Facts(), nil),
    ]

    @Test func eachCommandIsRefusedOrAllowedAsTheTableSays() {
        let rules = ConversationRules(groupSize: 3, broadcastUpTo: 2)
        for (command, facts, expected) in Self.cases {
            #expect(rules.refusal(command, by: "me", facts: facts, now: Self.now)?.code == expected, "\(command)")
        }
    }

    @Test func aDirectConversationHasOneIdWhoeverWritesFirst() {
        let id = ConversationRules.directId("huda", "omar")
        #expect(id == ConversationRules.directId("omar", "huda"))
        #expect(id != ConversationRules.directId("huda", "omar2"))
        #expect(Identifier.isValid(id) && id.hasPrefix("d-"))
    }

    @Test func readMarksGoToEveryoneOnlyInSmallConversations() {
        let rules = ConversationRules(groupSize: 500, broadcastUpTo: 100)
        #expect(rules.toEveryone(.direct, members: 2))
        #expect(rules.toEveryone(.group, members: 100))
        #expect(!rules.toEveryone(.group, members: 101))
    }
}
