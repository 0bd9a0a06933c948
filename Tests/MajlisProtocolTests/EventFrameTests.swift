import Foundation
import MajlisProtocol
import Testing

@Suite struct EventFrameTests {
    @Test func everyEventRoundTrips() throws {
        let member = Member(id: "a", name: "A", avatar: "", role: .member, seat: 2, chatMuted: false, joinedAt: 5)
        let room = RoomInfo(id: "r", title: "T", owner: "o", mode: .free, seatCount: 8, announcement: "", chatMutedAll: false, createdAt: 1, memberCount: 2, maxMembers: 0)
        let events: [ServerEvent] = [
            .roomUpdated(room), .roomEnded(reason: "ended"), .memberJoined(member), .memberLeft(user: "a", reason: "left"),
            .memberUpdated(member), .membersChanged(joined: [member], joinedCount: 4, left: ["z"], memberCount: 900), .seatUpdated([Seat(index: 1, state: .occupied, user: "a", muted: true, micOn: true)]),
            .attributesUpdated(set: ["k": AttributeValue(value: "v", owner: "a")], deleted: ["x"]),
            .requestReceived(SeatRequest(id: "q1", user: "a", index: nil, createdAt: 3)),
            .requestCancelled(requestId: "q1", user: "a", reason: "expired"), .requestAccepted(requestId: "q1", index: 2),
            .requestRejected(requestId: "q1"), .seatInvited(inviteId: "i1", from: "o", index: 3),
            .inviteReplied(inviteId: "i1", user: "a", accept: true), .youKicked(by: "o", until: 99), .youChatMuted(until: nil),
            .chatMessage(ChatMessage(msgId: 4, from: UserRef(id: "a", name: "A"), type: "text", text: "مرحبا", payload: .object(["x": .array([.int(1), .bool(true), .null])]), ts: 9)),
            .signal(from: "a", type: "gift", payload: .string("rose")), .tokenExpiring(expiresAt: 1_800_000_000),
            .speakerLevels([SpeakerLevel(user: "a", level: 80, vad: true)]),
            .networkQuality(user: "a", up: .poor, down: .excellent),
            .youElsewhere,
            .messageNew(ConversationMessage(
                conversation: "d-1", seq: 3, from: UserRef(id: "a", name: "A"), type: "paper_boat", text: nil, payload: ["n": 1], fallback: "A boat",
                replyTo: 2, mentions: ["b"], ts: 9, clientMsgId: "c1")),
            .messageUpdated(ConversationMessage(conversation: "d-1", seq: 3, from: UserRef(id: "a", name: "A"), text: nil, ts: 9, clientMsgId: "c1", revokedBy: "a")),
            .messageRead(conversation: "d-1", user: "b", seq: 3), .typing(conversation: "g-1", user: "a", until: 15),
            .conversationUpdated(ConversationChange(conversation: "g-1", by: "a", title: "T", joined: ["b"], memberCount: 2, user: "b", role: .admin)),
            .conversationRemoved(conversation: "g-1", by: "a", reason: "removed"),
            .unknown(name: "future.thing", data: .object(["a": .int(1)])),
        ]
        for event in events {
            let frame = EventFrame(room: "r", seq: event.changesRoomState ? 7 : nil, event: event)
            let data = try JSONEncoder().encode(frame)
            #expect(try JSONDecoder().decode(EventFrame.self, from: data) == frame)
            // As the SDK reads it: parsed once, decoded from the value.
            #expect(try JSONValueDecoder().decode(EventFrame.self, from: JSONParser().parse(data)) == frame)
        }
    }

    @Test func wireShapeMatchesTheProtocol() throws {
        let frame = EventFrame(room: "r1", seq: 42, event: .seatUpdated([Seat(index: 3)]))
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(frame)) as? [String: Any]
        #expect(object?["ev"] as? String == "seat.updated")
        #expect(object?["room"] as? String == "r1")
        #expect(object?["seq"] as? Int == 42)
        let seats = (object?["data"] as? [String: Any])?["seats"] as? [[String: Any]]
        #expect(seats?.first?["state"] as? String == "empty")
        #expect(seats?.first?["user"] == nil)

        let failure = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ResponseFrame(re: nil, error: ProtocolError(.badRequest, "x")))) as? [String: Any]
        #expect(failure?["ok"] as? Bool == false)
        #expect(failure?["re"] is NSNull)
        #expect((failure?["error"] as? [String: Any])?["code"] as? String == "bad_request")
    }
}
