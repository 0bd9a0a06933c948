import Foundation
import MajlisProtocol
import Testing

@Suite struct JSONValueDecoderTests {
    @Test func decodesWhatFoundationDecodesFromTheSameText() throws {
        let snapshot = RoomSnapshot(
            room: RoomInfo(id: "r", title: "مجلس", owner: "huda", mode: .request, seatCount: 2, announcement: "", chatMutedAll: false, createdAt: 1, memberCount: 1, maxMembers: 0),
            seq: 7, seats: [Seat(index: 0, state: .occupied, user: "huda", muted: false, micOn: true), Seat(index: 1)],
            members: [Member(id: "huda", name: "Huda", avatar: "", role: .owner, seat: 0, chatMuted: false, joinedAt: 1)],
            attributes: ["topic": AttributeValue(value: "poetry", owner: "huda")],
            me: SelfState(role: .owner, seat: 0, chatMuted: false, request: SeatRequest(id: "q1", user: "huda", index: nil, createdAt: 3)),
            requests: [], chat: .init(lastMsgId: 4))
        let text = try JSONEncoder().encode(snapshot)
        let value = try JSONDecoder().decode(JSONValue.self, from: text)
        #expect(try JSONValueDecoder().decode(RoomSnapshot.self, from: value) == snapshot)
        let page: JSONValue = ["messages": [["msgId": 3, "from": ["id": "a", "name": "A"], "type": "text", "text": "hi", "ts": 5, "payload": ["x": [1, 2.5, nil]]]]]
        let history = try JSONValueDecoder().decode(ChatHistoryPage.self, from: page)
        #expect(history.messages.first?.payload == ["x": [1, 2.5, nil]])
        #expect(try JSONValueDecoder().decode(MemberPage.self, from: ["members": []]) == MemberPage(members: [], next: nil))
    }

    @Test func mistakesSayWhere() {
        #expect {
            try JSONValueDecoder().decode(ChatPosted.self, from: ["msgId": "seven", "ts": 1])
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["msgId"]
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(RequestCreated.self, from: [:]) }
        // A fraction is not an integer, and an integer that does not fit is refused, not cut.
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(ChatPosted.self, from: ["msgId": 1.5, "ts": 1]) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([UInt8].self, from: [300]) }
    }
}
