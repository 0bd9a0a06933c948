import Foundation
import MajlisProtocol
import MajlisRoom

/// The webhook events one transition of a room caused, read from what the engine reported (its
/// events and effects) and from the seats before and after: pure, so every kind is tested
/// without a server.
enum RoomWebhooks {
    /// What a transition looked like from outside the engine.
    struct Transition {
        var room: String
        var now: Int64
        /// The member who joined, when the command was a join that made a new member.
        var joined: Member?
        var seatsBefore: [Seat]
        var seatsAfter: [Seat]
        var outcome: RoomOutcome
        /// The user a `member.unban` lifted.
        var unbanned: String?
    }

    static func events(_ transition: Transition, includeChat: Bool) -> [WebhookEvent] {
        var events: [WebhookEvent] = []
        func add(_ type: String, _ data: JSONValue) {
            events.append(WebhookEvent(type: type, room: transition.room, time: transition.now, data: data))
        }
        if let member = transition.joined {
            add("member.joined", ["user": .string(member.id), "name": .string(member.name), "role": .string(member.role.rawValue)])
        }
        for delivery in transition.outcome.deliveries {
            switch (delivery.event, delivery.audience) {
            case (.youKicked(let by, let until), .user(let user)):
                var data: [String: JSONValue] = ["user": .string(user), "by": .string(by)]
                if let until { data["until"] = .int(until) }
                add("member.kicked", .object(data))
            case (.requestReceived(let request), _):
                var data: [String: JSONValue] = ["requestId": .string(request.id), "user": .string(request.user)]
                if let index = request.index { data["index"] = .int(Int64(index)) }
                add("request.created", .object(data))
            case (.requestCancelled(let id, let user, let reason), _):
                let data: JSONValue = ["requestId": .string(id), "user": .string(user), "reason": .string(reason)]
                switch reason {
                case "accepted": add("request.accepted", data)
                case "rejected": add("request.rejected", data)
                default: add("request.cancelled", data)
                }
            case (.chatMessage(let message), _) where includeChat:
                add("chat.message", json(message))
            case (.giftSent(let gift), _):
                add("gift.sent", json(gift))
            default:
                break
            }
        }
        if let user = transition.unbanned { add("member.unbanned", ["user": .string(user)]) }
        for (before, after) in zip(transition.seatsBefore, transition.seatsAfter) {
            let index = JSONValue.int(Int64(after.index))
            if let user = before.user, before.user != after.user { add("seat.left", ["index": index, "user": .string(user)]) }
            if let user = after.user, before.user != after.user { add("seat.taken", ["index": index, "user": .string(user)]) }
            if before.muted != after.muted { add(after.muted ? "seat.muted" : "seat.unmuted", ["index": index]) }
            if before.state == .locked, after.state != .locked { add("seat.unlocked", ["index": index]) }
            if before.state != .locked, after.state == .locked { add("seat.locked", ["index": index]) }
        }
        for effect in transition.outcome.effects {
            if case .memberRemoved(let user, _, let reason) = effect {
                add("member.left", ["user": .string(user), "reason": .string(reason)])
            }
        }
        for delivery in transition.outcome.deliveries {
            if case .roomEnded(let reason) = delivery.event { add("room.ended", ["reason": .string(reason)]) }
        }
        return events
    }

    /// A value as JSON.
    static func json(_ value: some Encodable) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: WireEncoder.encode(value))) ?? .null
    }
}
