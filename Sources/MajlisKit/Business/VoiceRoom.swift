import Foundation
import MajlisProtocol

/// The interactor of a voice room (the business layer of seed 000).
///
/// It joins through the signaling capability, mirrors the room by applying events in `seq`
/// order (a gap triggers `room.sync`), resyncs after a reconnect, reacts to being kicked or the
/// room ending, and turns publishing on and off in the media capability from the seat state.
/// Every intent of the protocol is a method; state changes arrive as server events, so the
/// server stays the only authority. Errors are `MajlisError`; nothing here traps.
public actor VoiceRoom {
    public let roomId: String
    let signaling: any SignalingClient
    let media: any MediaEngine
    let clock: any KitClock
    let logger: Logger
    /// Recent chat kept in `state.chat`.
    let chatLimit = 200
    /// Join and leave notices kept in `state.notices`.
    let noticeLimit = 50

    public internal(set) var state: RoomState
    var stateSubscribers: [UUID: AsyncStream<RoomState>.Continuation] = [:]
    var eventSubscribers: [UUID: EventSubscriber] = [:]
    var listener: Task<Void, Never>?
    var resyncing = false
    /// Events that arrived while the join was in flight, applied after its snapshot.
    var heldFrames: [EventFrame] = []
    /// Whether a join is taking the session to the room's node (its reconnect is the join's).
    var moving = false
    /// Spatial sound: nil while off, else the places the app set for members (the rest by seat).
    var spatial: [String: SpatialPosition]?

    public init(
        roomId: String, signaling: any SignalingClient, media: any MediaEngine = NullMediaEngine(),
        clock: any KitClock = SystemClock(), logger: Logger = .silent
    ) {
        self.roomId = roomId
        self.signaling = signaling
        self.media = media
        self.clock = clock
        self.logger = logger
        self.state = RoomState(roomId: roomId)
    }

    /// An events subscriber and how many events it could not be given since it last could.
    struct EventSubscriber {
        var continuation: AsyncStream<RoomEvent>.Continuation
        var missed = 0
    }

    /// Events a slow subscriber may have waiting before newer ones are counted as `missed`.
    public static let eventBuffer = 1024

    /// The state from now on, starting with the current one. A reader always gets the newest
    /// state (one it has not read yet is replaced by a newer one: a screen draws the latest).
    public func states() -> AsyncStream<RoomState> {
        let (stream, continuation) = AsyncStream<RoomState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        stateSubscribers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// What changes from now on, one event each, in order. None is dropped silently: a reader
    /// that falls more than `eventBuffer` events behind is told how many it missed (`.missed`).
    public func events() -> AsyncStream<RoomEvent> {
        let (stream, continuation) = AsyncStream<RoomEvent>.makeStream(bufferingPolicy: .bufferingOldest(Self.eventBuffer))
        let id = UUID()
        eventSubscribers[id] = EventSubscriber(continuation: continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        stateSubscribers[id] = nil
        eventSubscribers[id] = nil
    }

    /// Hands `event` to every events subscriber (after telling one that fell behind how far).
    func emit(_ event: RoomEvent) {
        for id in eventSubscribers.keys {
            guard var subscriber = eventSubscribers[id] else { continue }
            if subscriber.missed > 0, case .enqueued = subscriber.continuation.yield(.missed(subscriber.missed)) { subscriber.missed = 0 }
            if subscriber.missed > 0 || !Self.enqueued(subscriber.continuation.yield(event)) { subscriber.missed += 1 }
            eventSubscribers[id] = subscriber
        }
    }

    private static func enqueued(_ result: AsyncStream<RoomEvent>.Continuation.YieldResult) -> Bool {
        if case .enqueued = result { return true }
        return false
    }

    /// The one place the state changes: then the media engine, the events' readers (the
    /// difference between before and after) and the state's readers are told.
    func change(_ body: (inout RoomState) -> Void) async {
        let before = state
        body(&state)
        guard state != before else { return }
        let publishing = state.mayPublish
        if publishing != state.publishing {
            state.publishing = publishing
            await media.setPublishing(publishing)
        }
        if spatial != nil && state.seats != before.seats { await media.setSpatialSound(spatialPositions()) }
        // Events first: a reader who sees the new state finds the events that led to it queued.
        for event in RoomEvent.changes(from: before, to: state) { emit(event) }
        for subscriber in stateSubscribers.values { subscriber.yield(state) }
    }

    /// Starts listening to the signaling client (once).
    func listen() {
        guard listener == nil else { return }
        let stream = signaling.subscribe()
        listener = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    // MARK: Joining and leaving

    /// Joins the room (creating it with `create` if it does not exist) and returns the state.
    @discardableResult
    public func join(create: RoomSettings? = nil) async throws(MajlisError) -> RoomState {
        listen()
        let me = signaling.currentSession?.userId ?? ""
        await change {
            $0.status = .joining
            $0.me = me
        }
        do {
            await apply(try await sendJoin(create: create))
            let held = heldFrames
            heldFrames = []
            for frame in held { await apply(frame) }
            await loadRecentChat()
            return state
        } catch {
            heldFrames = []
            await change { $0.status = .failed(error.description) }
            throw error
        }
    }

    /// How long (ms) a join waits for a room between nodes of a cluster: its node died and the
    /// lease it held has yet to lapse (2.5 s), or it is being placed again.
    static let placementWait: Int64 = 15_000

    /// Sends `room.join`. Where another node of the cluster hosts the room (`conflict` naming
    /// it), the session moves there and asks again; where that node cannot be reached (it just
    /// died) or is not named, it asks again every quarter second until the room has been
    /// placed again, for up to `placementWait`.
    func sendJoin(create: RoomSettings?) async throws(MajlisError) -> RoomSnapshot {
        let deadline = clock.now() + Self.placementWait
        var unreachable: Set<String> = []
        while true {
            do {
                return try await send(.join(create: create), answer: RoomSnapshot.self)
            } catch {
                guard case .server(let refusal) = error, refusal.code == .conflict, let host = refusal.host, clock.now() < deadline else { throw error }
                if let url = host.signaling, url != signaling.currentURL, !unreachable.contains(url) {
                    logger.info("room \(roomId) is on node \(host.node): moving to \(url)")
                    moving = true
                    defer { moving = false }
                    if try await signaling.move(to: url) != url { unreachable.insert(url) }
                    continue
                }
                do { try await clock.sleep(milliseconds: 250) } catch { throw MajlisError.misuse("the join was cancelled") }
            }
        }
    }

    /// Leaves the room.
    public func leave() async throws(MajlisError) {
        try await send(.leave)
        await media.stop()
        await change { state in
            state.status = .left
            let me = state.me
            state.seats = state.seats.map { $0.user == me ? Seat(index: $0.index, muted: $0.muted) : $0 }
        }
    }

    /// Fetches the whole room again and replaces the local copy.
    public func sync() async throws(MajlisError) {
        await apply(try await send(.sync, answer: RoomSnapshot.self))
    }

    /// Sends a room command and returns the answer's data.
    @discardableResult
    func send(_ command: RoomCommand) async throws(MajlisError) -> JSONValue {
        guard let request = RequestEncoder.request(command, room: roomId) else {
            throw MajlisError.misuse("several attribute changes at once must be atomic (batchAttributes)")
        }
        return try await signaling.request(request.op, request.args)
    }

    /// Sends a room command and decodes its answer.
    func send<Answer: Decodable>(_ command: RoomCommand, answer: Answer.Type) async throws(MajlisError) -> Answer {
        let data = try await send(command)
        do {
            return try JSONValueDecoder().decode(Answer.self, from: data)
        } catch {
            throw MajlisError.invalidResponse("\(Answer.self): \(error)")
        }
    }

    func apply(_ snapshot: RoomSnapshot) async {
        await media.configure(snapshot.media)
        await change { state in
            if snapshot.seq < state.seq && state.status == .joined { return }  // an older view than ours
            state.status = .joined
            state.room = snapshot.room
            state.seq = snapshot.seq
            state.seats = snapshot.seats
            state.members = snapshot.members
            state.memberCount = snapshot.room.memberCount
            state.attributes = snapshot.attributes
            state.role = snapshot.me.role
            state.chatMuted = snapshot.me.chatMuted
            state.myRequest = snapshot.me.request
            if snapshot.me.request != nil { state.requestStatus = .pending }
            state.requests = snapshot.requests
            state.lastMsgId = max(state.lastMsgId, snapshot.chat.lastMsgId)
        }
    }

    /// Loads the latest chat into the state (after a join or a reconnect).
    func loadRecentChat() async {
        guard let page = try? await send(.chatHistory(before: nil, limit: 50), answer: ChatHistoryPage.self) else { return }
        let messages = page.messages.reversed()
        await change { state in
            var known = Set(state.chat.map(\.msgId))
            for message in messages where known.insert(message.msgId).inserted { state.chat.append(message) }
            state.chat.sort { $0.msgId < $1.msgId }
            if state.chat.count > chatLimit { state.chat.removeFirst(state.chat.count - chatLimit) }
            state.lastMsgId = max(state.lastMsgId, state.chat.last?.msgId ?? 0)
        }
    }
}
