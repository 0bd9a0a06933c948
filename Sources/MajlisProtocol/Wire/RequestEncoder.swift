import Foundation

/// A request as a client sends it (`frame`), and a room command's op and `args` (docs/protocol.md sections 6-9,
/// 13), the inverse of `RequestDecoder` for every command the wire can express.
public enum RequestEncoder {
    /// A request frame as a client sends it (docs/protocol.md section 3): `{"id", "op", "args",
    /// "rid"}`, `args` left out when empty and `rid` when nil.
    public static func frame(id: Int64, op: String, args: [String: JSONValue] = [:], rid: String? = nil) -> Data {
        var frame: [String: JSONValue] = ["id": .int(id), "op": .string(op)]
        if !args.isEmpty { frame["args"] = .object(args) }
        if let rid { frame["rid"] = .string(rid) }
        return (try? JSONEncoder().encode(JSONValue.object(frame))) ?? Data()
    }

    /// The op and args of `command` in `room`; nil only for a non-atomic attribute change of
    /// other than one step (the wire has `attr.set` and `attr.delete` for one step, and
    /// `attr.batch`, which is atomic, for several).
    public static func request(_ command: RoomCommand, room: String) -> (op: String, args: [String: JSONValue])? {
        var args: [String: JSONValue] = ["room": .string(room)]
        func put(_ key: String, _ value: JSONValue?) { if let value { args[key] = value } }
        let op: String
        switch command {
        case .create(let settings):
            op = "room.create"
            args.merge(Self.settings(settings)) { $1 }
        case .join(let create):
            op = "room.join"
            put("create", create.map { .object(Self.settings($0)) })
        case .leave: op = "room.leave"
        case .sync: op = "room.sync"
        case .update(let title, let announcement, let mode, let seatCount):
            op = "room.update"
            put("title", title.map(JSONValue.string))
            put("announcement", announcement.map(JSONValue.string))
            put("mode", mode.map { .string($0.rawValue) })
            put("seatCount", seatCount.map { .int(Int64($0)) })
        case .muteChatAll(let on):
            op = "room.muteChatAll"
            put("on", .bool(on))
        case .allowEmoji(let on):
            op = "room.emoji"
            put("on", .bool(on))
        case .sendEmoji(let index, let pack, let item):
            op = "seat.emoji"
            put("index", .int(Int64(index)))
            put("pack", .string(pack))
            put("item", .string(item))
        case .sendGift(let from, let to, let index, let pack, let item, let count, let key):
            op = "gift.send"
            put("from", .string(from))
            if let to { put("to", .string(to)) }
            if let index { put("index", .int(Int64(index))) }
            put("pack", .string(pack))
            put("item", .string(item))
            put("count", .int(Int64(count)))
            put("key", .string(key))
        case .giftLeaders(let since, let until, let limit):
            op = "gift.leaders"
            put("since", .int(since))
            put("until", .int(until))
            put("limit", .int(Int64(limit)))
        case .end: op = "room.end"
        case .takeSeat(let index):
            op = "seat.take"
            put("index", index.map { .int(Int64($0)) })
        case .leaveSeat: op = "seat.leave"
        case .switchSeat(let to):
            op = "seat.switch"
            put("to", .int(Int64(to)))
        case .lockSeat(let index, let locked, let kick):
            op = "seat.lock"
            args.merge(["index": .int(Int64(index)), "locked": .bool(locked), "kick": .bool(kick)]) { $1 }
        case .muteSeat(let index, let muted):
            op = "seat.mute"
            args.merge(["index": .int(Int64(index)), "muted": .bool(muted)]) { $1 }
        case .muteAllSeats(let muted, let membersMayUnmute):
            op = "seat.muteAll"
            args.merge(["muted": .bool(muted), "membersMayUnmute": .bool(membersMayUnmute)]) { $1 }
        case .kickFromSeat(let index):
            op = "seat.kick"
            put("index", .int(Int64(index)))
        case .inviteToSeat(let user, let index):
            op = "seat.invite"
            put("user", .string(user))
            put("index", index.map { .int(Int64($0)) })
        case .replyToInvite(let inviteId, let accept):
            op = "seat.inviteReply"
            args.merge(["inviteId": .string(inviteId), "accept": .bool(accept)]) { $1 }
        case .setMic(let on):
            op = "mic.set"
            put("on", .bool(on))
        case .createRequest(let index):
            op = "request.create"
            put("index", index.map { .int(Int64($0)) })
        case .cancelRequest(let requestId):
            op = "request.cancel"
            put("requestId", .string(requestId))
        case .acceptRequest(let requestId, let index):
            op = "request.accept"
            put("requestId", .string(requestId))
            put("index", index.map { .int(Int64($0)) })
        case .rejectRequest(let requestId):
            op = "request.reject"
            put("requestId", .string(requestId))
        case .listMembers(let after, let limit):
            op = "member.list"
            put("after", after.map(JSONValue.string))
            put("limit", .int(Int64(limit)))
        case .updateMember(let name, let avatar, let refusesOwnership):
            op = "member.update"
            put("name", name.map(JSONValue.string))
            put("avatar", avatar.map(JSONValue.string))
            put("refuseOwnership", refusesOwnership.map(JSONValue.bool))
        case .setRole(let user, let role):
            op = "member.role"
            args.merge(["user": .string(user), "role": .string(role.rawValue)]) { $1 }
        case .transferOwner(let user):
            op = "member.transferOwner"
            put("user", .string(user))
        case .kickMember(let user, let banSeconds):
            op = "member.kick"
            args.merge(["user": .string(user), "banSeconds": .int(Int64(banSeconds))]) { $1 }
        case .unban(let user):
            op = "member.unban"
            put("user", .string(user))
        case .muteChat(let user, let seconds):
            op = "member.muteChat"
            args.merge(["user": .string(user), "seconds": .int(Int64(seconds))]) { $1 }
        case .sendChat(let draft):
            op = "chat.send"
            args.merge(["type": .string(draft.type), "clientMsgId": .string(draft.clientMsgId)]) { $1 }
            put("text", draft.text.map(JSONValue.string))
            put("payload", draft.payload)
        case .chatHistory(let before, let limit):
            op = "chat.history"
            put("before", before.map(JSONValue.int))
            put("limit", .int(Int64(limit)))
        case .attributes(let steps, let force, let atomic):
            put("force", .bool(force))
            if atomic {
                op = "attr.batch"
                put("ops", .array(steps.map { step in
                    switch step {
                    case .set(let attrs, let deleteOnLeave, let updateOwner):
                        return ["op": "set", "attrs": .object(attrs.mapValues(JSONValue.string)), "deleteOnLeave": .bool(deleteOnLeave), "updateOwner": .bool(updateOwner)]
                    case .delete(let keys):
                        return ["op": "delete", "keys": .array(keys.map(JSONValue.string))]
                    }
                }))
            } else {
                guard steps.count == 1 else { return nil }
                switch steps[0] {
                case .set(let attrs, let deleteOnLeave, let updateOwner):
                    op = "attr.set"
                    args.merge(["attrs": .object(attrs.mapValues(JSONValue.string)), "deleteOnLeave": .bool(deleteOnLeave), "updateOwner": .bool(updateOwner)]) { $1 }
                case .delete(let keys):
                    op = "attr.delete"
                    put("keys", .array(keys.map(JSONValue.string)))
                }
            }
        case .sendSignal(let target, let type, let payload):
            op = "signal.send"
            switch target {
            case .room: put("to", "room")
            case .users(let users): put("to", .array(users.map(JSONValue.string)))
            }
            put("type", .string(type))
            if payload != .null { put("payload", payload) }
        case .offerWebRTC(let sdp):
            op = "webrtc.offer"
            put("sdp", .string(sdp))
        }
        return (op, args)
    }

    static func settings(_ settings: RoomSettings) -> [String: JSONValue] {
        [
            "title": .string(settings.title), "seatCount": .int(Int64(settings.seatCount)), "mode": .string(settings.mode.rawValue),
            "announcement": .string(settings.announcement), "maxMembers": .int(Int64(settings.maxMembers)),
        ]
    }
}
