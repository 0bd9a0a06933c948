import Foundation
import MajlisProtocol

/// One method per op of the protocol. They return when the server answered; the state changes
/// arrive as events (so every member sees the same thing in the same order).
extension VoiceRoom {
    // MARK: Seats

    /// Takes seat `index`, or the lowest free one.
    public func takeSeat(_ index: Int? = nil) async throws(MajlisError) {
        try await send(.takeSeat(index: index))
    }

    public func leaveSeat() async throws(MajlisError) { try await send(.leaveSeat) }

    public func switchSeat(to index: Int) async throws(MajlisError) { try await send(.switchSeat(to: index)) }

    public func lockSeat(_ index: Int, locked: Bool, kick: Bool = false) async throws(MajlisError) {
        try await send(.lockSeat(index: index, locked: locked, kick: kick))
    }

    /// Host mute ("ban mic") of a seat.
    public func muteSeat(_ index: Int, muted: Bool) async throws(MajlisError) {
        try await send(.muteSeat(index: index, muted: muted))
    }

    public func kickFromSeat(_ index: Int) async throws(MajlisError) { try await send(.kickFromSeat(index: index)) }

    public func inviteToSeat(_ user: String, index: Int? = nil) async throws(MajlisError) {
        try await send(.inviteToSeat(user: user, index: index))
    }

    /// Answers the pending invitation (`state.invite`).
    public func replyToInvite(accept: Bool) async throws(MajlisError) {
        guard let invite = state.invite else { throw MajlisError.misuse("there is no invitation to answer") }
        do {
            try await send(.replyToInvite(inviteId: invite.inviteId, accept: accept))
        } catch {
            await change { $0.invite = nil }  // answered or gone: either way no longer open
            throw error
        }
        await change { $0.invite = nil }
    }

    /// The user's own microphone switch.
    public func setMic(on: Bool) async throws(MajlisError) { try await send(.setMic(on: on)) }

    // MARK: Local audio (no server round trip)

    /// Microphone volume, 0...400 (100 unchanged).
    public func setCaptureVolume(_ volume: Int) async { await media.setCaptureVolume(min(400, max(0, volume))) }

    /// Echo cancellation, noise suppression and automatic gain on the microphone
    /// (`VoiceProcessing.standard`: all on, for a microphone and a speaker in one room; `.off`).
    public func setVoiceProcessing(_ processing: VoiceProcessing) async { await media.setVoiceProcessing(processing) }

    /// How the voice sounds to the room: a preset (`VoiceEffect.Preset.ktv.effect`) or a pitch,
    /// equalizer and reverb of the app's own; `.none` for the voice as it is.
    public func setVoiceEffect(_ effect: VoiceEffect) async { await media.setVoiceEffect(effect) }

    /// Volume of everything heard, 0...400 (100 unchanged).
    public func setPlaybackVolume(_ volume: Int) async { await media.setPlaybackVolume(min(400, max(0, volume))) }

    /// Stops (or resumes) hearing one member, for this user only.
    public func muteRemote(_ user: String, muted: Bool) async throws(MajlisError) {
        guard let ssrc = state.seats.first(where: { $0.user == user })?.ssrc else {
            throw MajlisError.misuse("\(user) is not on a seat")
        }
        await media.setRemoteMuted(ssrc: ssrc, muted: muted)
    }

    /// How loud one member is heard, for this user only: 0...400 (100 as they are).
    public func setMemberVolume(_ user: String, volume: Int) async throws(MajlisError) {
        guard let ssrc = state.seats.first(where: { $0.user == user })?.ssrc else {
            throw MajlisError.misuse("\(user) is not on a seat")
        }
        await media.setRemoteVolume(ssrc: ssrc, volume: min(400, max(0, volume)))
    }

    /// Spatial sound: each speaker heard from their place around the user (by default by seat,
    /// on an arc in front from the first seat on the left to the last on the right; `places`
    /// puts members elsewhere), binaurally, for headphones. Off: everyone in the middle. The
    /// places follow the seats as they change. Needs a stereo speaker (`AudioSink.channels`).
    public func setSpatialSound(_ on: Bool, places: [String: SpatialPosition] = [:]) async {
        spatial = on ? places : nil
        await media.setSpatialSound(on ? spatialPositions() : nil)
    }

    /// Where each seated speaker is heard from now, by SSRC.
    func spatialPositions() -> [UInt32: SpatialPosition] {
        var positions: [UInt32: SpatialPosition] = [:]
        for seat in state.seats {
            guard let ssrc = seat.ssrc else { continue }
            positions[ssrc] = seat.user.flatMap { spatial?[$0] } ?? .seat(seat.index, of: state.seats.count)
        }
        return positions
    }

    // MARK: Request to speak

    /// Asks to speak; returns the request id.
    @discardableResult
    public func requestSeat(_ index: Int? = nil) async throws(MajlisError) -> String {
        let id = try await send(.createRequest(index: index), answer: RequestCreated.self).requestId
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
        try await send(.cancelRequest(requestId: request.id))
        await change {
            $0.myRequest = nil
            $0.requestStatus = .cancelled
        }
    }

    public func acceptRequest(_ requestId: String, index: Int? = nil) async throws(MajlisError) {
        try await send(.acceptRequest(requestId: requestId, index: index))
    }

    public func rejectRequest(_ requestId: String) async throws(MajlisError) {
        try await send(.rejectRequest(requestId: requestId))
    }

    // MARK: Members and moderation

    /// One page of members in join order, and the id to continue after.
    public func listMembers(after: String? = nil, limit: Int = 100) async throws(MajlisError) -> (members: [Member], next: String?) {
        let page = try await send(.listMembers(after: after, limit: limit), answer: MemberPage.self)
        return (page.members, page.next)
    }

    public func updateProfile(name: String? = nil, avatar: String? = nil) async throws(MajlisError) {
        try await send(.updateMember(name: name, avatar: avatar))
    }

    public func setRole(_ user: String, _ role: Role) async throws(MajlisError) {
        try await send(.setRole(user: user, role: role))
    }

    public func transferOwner(to user: String) async throws(MajlisError) { try await send(.transferOwner(user: user)) }

    /// Whether this member will not be handed the room (`transferOwner` to it is then refused),
    /// for as long as it stays in the room.
    public func refuseOwnership(_ refuse: Bool = true) async throws(MajlisError) {
        try await send(.updateMember(name: nil, avatar: nil, refusesOwnership: refuse))
    }

    /// Removes a member, banning for `banSeconds` when above zero.
    public func kick(_ user: String, banSeconds: Int = 0) async throws(MajlisError) {
        try await send(.kickMember(user: user, banSeconds: banSeconds))
    }

    /// Mutes a member's chat for `seconds` (0 unmutes).
    public func muteChat(_ user: String, seconds: Int) async throws(MajlisError) {
        try await send(.muteChat(user: user, seconds: seconds))
    }

    public func muteChatForAll(_ on: Bool) async throws(MajlisError) { try await send(.muteChatAll(on)) }

    /// Whether members may send seat emoji (the owner and admins always may).
    public func allowEmoji(_ on: Bool) async throws(MajlisError) { try await send(.allowEmoji(on)) }

    public func updateRoom(title: String? = nil, announcement: String? = nil, mode: RoomMode? = nil, seatCount: Int? = nil) async throws(MajlisError) {
        try await send(.update(title: title, announcement: announcement, mode: mode, seatCount: seatCount))
    }

    /// Ends the room for everyone (owner, or a token with the admin grant).
    public func end() async throws(MajlisError) { try await send(.end) }

    // MARK: Chat

    /// Sends a chat message; returns its id. Retries never post it twice (one `clientMsgId`).
    @discardableResult
    public func sendChat(_ text: String?, type: String = "text", payload: JSONValue? = nil) async throws(MajlisError) -> Int64 {
        let draft = ChatDraft(type: type, text: text, payload: payload, clientMsgId: UUID().uuidString)
        return try await send(.sendChat(draft), answer: ChatPosted.self).msgId
    }

    /// The room's top givers and receivers of gifts (`limit` of each, the most first): of gifts
    /// sent from `since` to before `until` (Unix ms; all time by default).
    public func giftLeaders(since: Int64 = 0, until: Int64 = .max, limit: Int = 10) async throws(MajlisError) -> GiftLeaders {
        try await send(.giftLeaders(since: since, until: until, limit: limit), answer: GiftLeaders.self)
    }

    /// Loads up to `limit` messages older than the oldest one held; returns how many came.
    @discardableResult
    public func loadOlderChat(limit: Int = 50) async throws(MajlisError) -> Int {
        let older = try await send(.chatHistory(before: state.chat.first?.msgId, limit: limit), answer: ChatHistoryPage.self).messages
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
        let step = AttributeOperation.set(attributes, deleteOnLeave: deleteOnLeave, updateOwner: updateOwner)
        return try await send(.attributes([step], force: force, atomic: false), answer: AttributeFailures.self).failed
    }

    @discardableResult
    public func deleteAttributes(_ keys: [String], force: Bool = false) async throws(MajlisError) -> [String] {
        try await send(.attributes([.delete(keys)], force: force, atomic: false), answer: AttributeFailures.self).failed
    }

    /// All or nothing: `conflict` if any key belongs to someone else.
    public func batchAttributes(_ operations: [AttributeOperation], force: Bool = false) async throws(MajlisError) {
        try await send(.attributes(operations, force: force, atomic: true))
    }

    /// Shows emoji `item` of resource pack `pack` (its SHA-256 name, from `GET /v1/packs`) on seat
    /// `index` for everyone in the room, the sender too (`RoomEvent.seatEmoji`).
    public func sendEmoji(toSeat index: Int, pack: String, item: String) async throws(MajlisError) {
        try await send(.sendEmoji(index: index, pack: pack, item: item))
    }

    /// Sends a custom signal (gift, emoji, app command) to users or the whole room.
    public func sendSignal(to target: SignalTarget, type: String, payload: JSONValue = .null) async throws(MajlisError) {
        try await send(.sendSignal(to: target, type: type, payload: payload))
    }
}
