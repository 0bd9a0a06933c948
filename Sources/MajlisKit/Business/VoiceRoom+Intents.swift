import Foundation
import MajlisProtocol

/// One method per op of the protocol. They return when the server answered; the state changes
/// arrive as events (so every member sees the same thing in the same order).
extension VoiceRoom {
    // MARK: Seats

    /// Takes seat `index`, or the lowest free one.
    public func takeSeat(_ index: Int? = nil) async throws(MajlisError) {
        var args: [String: JSONValue] = [:]
        if let index { args["index"] = .int(Int64(index)) }
        _ = try await call("seat.take", args)
    }

    public func leaveSeat() async throws(MajlisError) { _ = try await call("seat.leave") }

    public func switchSeat(to index: Int) async throws(MajlisError) { _ = try await call("seat.switch", ["to": .int(Int64(index))]) }

    public func lockSeat(_ index: Int, locked: Bool, kick: Bool = false) async throws(MajlisError) {
        _ = try await call("seat.lock", ["index": .int(Int64(index)), "locked": .bool(locked), "kick": .bool(kick)])
    }

    /// Host mute ("ban mic") of a seat.
    public func muteSeat(_ index: Int, muted: Bool) async throws(MajlisError) {
        _ = try await call("seat.mute", ["index": .int(Int64(index)), "muted": .bool(muted)])
    }

    public func kickFromSeat(_ index: Int) async throws(MajlisError) { _ = try await call("seat.kick", ["index": .int(Int64(index))]) }

    public func inviteToSeat(_ user: String, index: Int? = nil) async throws(MajlisError) {
        var args: [String: JSONValue] = ["user": .string(user)]
        if let index { args["index"] = .int(Int64(index)) }
        _ = try await call("seat.invite", args)
    }

    /// Answers the pending invitation (`state.invite`).
    public func replyToInvite(accept: Bool) async throws(MajlisError) {
        guard let invite = state.invite else { throw MajlisError.misuse("there is no invitation to answer") }
        defer { state.invite = nil }
        _ = try await call("seat.inviteReply", ["inviteId": .string(invite.inviteId), "accept": .bool(accept)])
    }

    /// The user's own microphone switch.
    public func setMic(on: Bool) async throws(MajlisError) { _ = try await call("mic.set", ["on": .bool(on)]) }

    // MARK: Local audio (no server round trip)

    /// Microphone volume, 0...400 (100 unchanged).
    public func setCaptureVolume(_ volume: Int) async { await media.setCaptureVolume(min(400, max(0, volume))) }

    /// Volume of everything heard, 0...400 (100 unchanged).
    public func setPlaybackVolume(_ volume: Int) async { await media.setPlaybackVolume(min(400, max(0, volume))) }

    /// Stops (or resumes) hearing one member, for this user only.
    public func muteRemote(_ user: String, muted: Bool) async throws(MajlisError) {
        guard let ssrc = state.seats.first(where: { $0.user == user })?.ssrc else {
            throw MajlisError.misuse("\(user) is not on a seat")
        }
        await media.setRemoteMuted(ssrc: ssrc, muted: muted)
    }

    // MARK: Request to speak

    /// Asks to speak; returns the request id.
    @discardableResult
    public func requestSeat(_ index: Int? = nil) async throws(MajlisError) -> String {
        var args: [String: JSONValue] = [:]
        if let index { args["index"] = .int(Int64(index)) }
        let data = try await call("request.create", args)
        guard let id = data["requestId"]?.stringValue else { throw MajlisError.invalidResponse("request.create: \(data)") }
        let request = SeatRequest(id: id, user: state.me, index: index, createdAt: clock.now())
        await change {
            $0.myRequest = request
            $0.requestStatus = .pending
        }
        return id
    }

    /// Withdraws this user's request to speak.
    public func cancelRequest() async throws(MajlisError) {
        guard let request = state.myRequest else { throw MajlisError.misuse("there is no request to cancel") }
        _ = try await call("request.cancel", ["requestId": .string(request.id)])
        await change {
            $0.myRequest = nil
            $0.requestStatus = .cancelled
        }
    }

    public func acceptRequest(_ requestId: String, index: Int? = nil) async throws(MajlisError) {
        var args: [String: JSONValue] = ["requestId": .string(requestId)]
        if let index { args["index"] = .int(Int64(index)) }
        _ = try await call("request.accept", args)
    }

    public func rejectRequest(_ requestId: String) async throws(MajlisError) {
        _ = try await call("request.reject", ["requestId": .string(requestId)])
    }

    // MARK: Members and moderation

    /// One page of members in join order, and the id to continue after.
    public func listMembers(after: String? = nil, limit: Int = 100) async throws(MajlisError) -> (members: [Member], next: String?) {
        var args: [String: JSONValue] = ["limit": .int(Int64(limit))]
        if let after { args["after"] = .string(after) }
        let data = try await call("member.list", args)
        let members = (data["members"]?.arrayValue ?? []).compactMap { try? JSONDecoder().decode(Member.self, from: JSONEncoder().encode($0)) }
        return (members, data["next"]?.stringValue)
    }

    public func updateProfile(name: String? = nil, avatar: String? = nil) async throws(MajlisError) {
        var args: [String: JSONValue] = [:]
        if let name { args["name"] = .string(name) }
        if let avatar { args["avatar"] = .string(avatar) }
        _ = try await call("member.update", args)
    }

    public func setRole(_ user: String, _ role: Role) async throws(MajlisError) {
        _ = try await call("member.role", ["user": .string(user), "role": .string(role.rawValue)])
    }

    public func transferOwner(to user: String) async throws(MajlisError) { _ = try await call("member.transferOwner", ["user": .string(user)]) }

    /// Removes a member, banning for `banSeconds` when above zero.
    public func kick(_ user: String, banSeconds: Int = 0) async throws(MajlisError) {
        _ = try await call("member.kick", ["user": .string(user), "banSeconds": .int(Int64(banSeconds))])
    }

    /// Mutes a member's chat for `seconds` (0 unmutes).
    public func muteChat(_ user: String, seconds: Int) async throws(MajlisError) {
        _ = try await call("member.muteChat", ["user": .string(user), "seconds": .int(Int64(seconds))])
    }

    public func muteChatForAll(_ on: Bool) async throws(MajlisError) { _ = try await call("room.muteChatAll", ["on": .bool(on)]) }

    public func updateRoom(title: String? = nil, announcement: String? = nil, mode: RoomMode? = nil, seatCount: Int? = nil) async throws(MajlisError) {
        var args: [String: JSONValue] = [:]
        if let title { args["title"] = .string(title) }
        if let announcement { args["announcement"] = .string(announcement) }
        if let mode { args["mode"] = .string(mode.rawValue) }
        if let seatCount { args["seatCount"] = .int(Int64(seatCount)) }
        _ = try await call("room.update", args)
    }

    /// Ends the room for everyone (owner, or a token with the admin grant).
    public func end() async throws(MajlisError) { _ = try await call("room.end") }

    // MARK: Chat

    /// Sends a chat message; returns its id. Retries never post it twice (one `clientMsgId`).
    @discardableResult
    public func sendChat(_ text: String?, type: String = "text", payload: JSONValue? = nil) async throws(MajlisError) -> Int64 {
        var args: [String: JSONValue] = ["type": .string(type), "clientMsgId": .string(UUID().uuidString)]
        if let text { args["text"] = .string(text) }
        if let payload { args["payload"] = payload }
        let data = try await call("chat.send", args)
        guard let msgId = data["msgId"]?.intValue else { throw MajlisError.invalidResponse("chat.send: \(data)") }
        return msgId
    }

    /// Loads up to `limit` messages older than the oldest one held; returns how many came.
    @discardableResult
    public func loadOlderChat(limit: Int = 50) async throws(MajlisError) -> Int {
        var args: [String: JSONValue] = ["limit": .int(Int64(limit))]
        if let oldest = state.chat.first?.msgId { args["before"] = .int(oldest) }
        let data = try await call("chat.history", args)
        let older = (data["messages"]?.arrayValue ?? []).compactMap(Self.decodeMessage)
        await change { state in
            let known = Set(state.chat.map(\.msgId))
            state.chat = older.filter { !known.contains($0.msgId) }.reversed() + state.chat
        }
        return older.count
    }

    // MARK: Attributes and signals

    /// Sets attributes; returns the keys skipped because someone else owns them.
    @discardableResult
    public func setAttributes(_ attributes: [String: String], force: Bool = false, deleteOnLeave: Bool = false, updateOwner: Bool = false) async throws(MajlisError) -> [String] {
        let data = try await call("attr.set", [
            "attrs": .object(attributes.mapValues { .string($0) }), "force": .bool(force), "deleteOnLeave": .bool(deleteOnLeave),
            "updateOwner": .bool(updateOwner),
        ])
        return data["failed"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    @discardableResult
    public func deleteAttributes(_ keys: [String], force: Bool = false) async throws(MajlisError) -> [String] {
        let data = try await call("attr.delete", ["keys": .array(keys.map { .string($0) }), "force": .bool(force)])
        return data["failed"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// All or nothing: `conflict` if any key belongs to someone else.
    public func batchAttributes(_ operations: [AttributeOperation], force: Bool = false) async throws(MajlisError) {
        let ops: [JSONValue] = operations.map { operation in
            switch operation {
            case .set(let values, let deleteOnLeave, let updateOwner):
                return ["op": "set", "attrs": .object(values.mapValues { .string($0) }), "deleteOnLeave": .bool(deleteOnLeave), "updateOwner": .bool(updateOwner)]
            case .delete(let keys):
                return ["op": "delete", "keys": .array(keys.map { .string($0) })]
            }
        }
        _ = try await call("attr.batch", ["ops": .array(ops), "force": .bool(force)])
    }

    /// Sends a custom signal (gift, emoji, app command) to users or the whole room.
    public func sendSignal(to target: SignalTarget, type: String, payload: JSONValue = .null) async throws(MajlisError) {
        let to: JSONValue
        switch target {
        case .room: to = "room"
        case .users(let users): to = .array(users.map { .string($0) })
        }
        _ = try await call("signal.send", ["to": to, "type": .string(type), "payload": payload])
    }
}
