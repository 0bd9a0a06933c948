import MajlisKit
import MajlisTestSupport
import Testing

/// The SDK's card registry: a card it knows is decoded; a thousand it does not, of random type
/// codes and payloads, are each shown by their fallback, and none fails.
@Suite struct MessageCardsTests {
    enum Card: Sendable, Equatable {
        case roomInvite(room: String)
    }

    static var cards: MessageCards<Card> {
        var cards = MessageCards<Card>()
        cards.register("room_invite") { payload in payload?["room"]?.stringValue.map(Card.roomInvite) }
        return cards
    }

    static func message(type: String, text: String? = nil, payload: JSONValue? = nil, fallback: String? = nil, revokedBy: String? = nil) -> ConversationMessage {
        ConversationMessage(
            conversation: "g", seq: 1, from: UserRef(id: "omar", name: "Omar"), type: type, text: text, payload: payload, fallback: fallback, ts: 1,
            clientMsgId: "c", revokedBy: revokedBy)
    }

    @Test func knownCardsAreDecodedAndTheRestShowTheirFallback() {
        let cards = Self.cards
        #expect(cards.content(of: Self.message(type: "text", text: "مرحبا")) == .text("مرحبا"))
        #expect(cards.content(of: Self.message(type: "room_invite", payload: ["room": "salon"], fallback: "Join salon")) == .card(.roomInvite(room: "salon")))
        // Known, but a payload its decoder cannot read: the fallback.
        #expect(cards.content(of: Self.message(type: "room_invite", payload: ["room": 7], fallback: "Join salon")) == .fallback("Join salon"))
        #expect(cards.content(of: Self.message(type: "paper_boat", text: "a note", fallback: "")) == .fallback("a note"))
        #expect(cards.content(of: Self.message(type: "paper_boat")) == .fallback("paper_boat"))
        #expect(cards.content(of: Self.message(type: "room_invite", revokedBy: "omar")) == .revoked)
    }

    @Test func aThousandUnknownCardsAreEachShownByTheirFallback() {
        let cards = Self.cards
        var random = SplitMix64(seed: 54)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz_.-0123456789مرحبا東京カード😀")
        func text(_ length: Int) -> String { String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }) }
        func json(_ depth: Int) -> JSONValue {
            switch random.next() % (depth > 2 ? 4 : 6) {
            case 0: return .null
            case 1: return .int(Int64(bitPattern: random.next()))
            case 2: return .string(text(Int(random.next() % 20)))
            case 3: return .bool(random.next() % 2 == 0)
            case 4: return .array((0..<Int(random.next() % 4)).map { _ in json(depth + 1) })
            default: return .object(Dictionary((0..<Int(random.next() % 4)).map { ("k\($0)", json(depth + 1)) }) { a, _ in a })
            }
        }
        var shown = 0
        for index in 0..<1_000 {
            var type = text(1 + Int(random.next() % 63))
            if type == "text" || type == "room_invite" { type += "x" }
            let fallback = "card \(index): \(text(Int(random.next() % 30)))"
            let message = Self.message(type: type, text: random.next() % 3 == 0 ? text(10) : nil, payload: json(0), fallback: fallback)
            if cards.content(of: message) == .fallback(fallback) { shown += 1 }
        }
        #expect(shown == 1_000)
    }
}
