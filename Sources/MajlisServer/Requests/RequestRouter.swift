import Foundation
import MajlisProtocol
import MajlisRoom

/// Decides where a decoded request goes (`Route`), from the request and the session's state:
/// pure, tested from a table without sockets (`RequestRouterTests`). It takes the session's
/// rate tokens a request spends (chat, WebRTC offers, the read budget), so it runs under the
/// session's lock with `state`; everything it refuses is answered without touching a room.
///
/// The order of its checks is the protocol's: `hello` first; then for a room op the token's
/// room, the rates, the rooms a connection may be in, the grants; last, whether the room is
/// one this session reaches through another node.
struct RequestRouter: Sendable {
    /// Rooms one connection may be in at once (`maxRoomsPerConnection`).
    var roomsPerConnection: Int
    /// Rooms one user may own, unless an admin (`maxRoomsPerUser`).
    var roomsPerUser: Int

    /// Where `request` goes. `rooms` gives the rooms the session's user is in on this node, and
    /// `relayedTo` the node the session reaches a room through (both read only for room ops,
    /// under the session's lock: they must not take it).
    func route(
        _ request: IncomingRequest, state: inout SessionState, now: Int64, rooms: () -> Set<String>, relayedTo: (String) -> String?
    ) -> Route {
        if case .hello(let args) = request.command {
            return state.claims == nil ? .hello(args) : .refuse(ProtocolError(.badRequest, "hello was already sent on this connection"))
        }
        guard let claims = state.claims, let caller = state.caller else { return .reject(ProtocolError(.unauthorized, "the first request must be hello")) }
        switch request.command {
        case .hello: preconditionFailure("answered above")
        case .ping: return .session(.ping)
        case .renew(let token): return .session(.renew(token: token))
        case .bye: return .session(.bye)
        case .echoStart(let delay, let sdp):
            // Offers cost CPU to read, wherever they come: under the same limit as `webrtc.offer`'s.
            if sdp != nil, !state.admitOffer(now: now) { return .refuse(tooManyOffers(state.limits)) }
            return .precall(.echoStart(delay: delay, sdp: sdp))
        case .echoStop: return .precall(.echoStop)
        case .probeStart(let up, let down): return .precall(.probeStart(up: up, down: down))
        case .probeResult: return .precall(.probeResult)
        case .probeStop: return .precall(.probeStop)
        case .room(let room, let command):
            return route(room, command, claims: claims, caller: caller, state: &state, now: now, rooms: rooms, relayedTo: relayedTo)
        case .messaging(let command):
            return route(command, claims: claims, caller: caller, state: &state, now: now)
        }
    }

    /// A messaging op: not with a token for one room; sending (and typing) under the chat grant
    /// and the chat rate shared with rooms, reads under the read budget. A client's log is
    /// delivered with any token (the app asked it of the user, whatever the token is for).
    private func route(_ command: MessagingCommand, claims: AccessClaims, caller: Caller, state: inout SessionState, now: Int64) -> Route {
        if case .deliverLog = command { return .messaging(command) }
        if let room = claims.room, room != "*" {
            return .refuse(ProtocolError(.forbidden, "your token is for room \(room); messaging needs a token for no one room"))
        }
        let limits = state.limits
        switch command {
        case .send, .typing:
            guard caller.grants.chat else { return .refuse(ProtocolError(.forbidden, "your token does not grant chat")) }
            guard state.admitChat(now: now) else {
                return .refuse(ProtocolError(.rateLimited, "too many messages: at most \(limits.chatPerSecond) per second across rooms and conversations"))
            }
        case .list, .get, .sync, .search, .presence:
            guard state.admitRead(now: now) else {
                return .refuse(ProtocolError(.rateLimited, "too much read: answers to lists and syncs of at most \(limits.answerBytesPerSecond) bytes a second"))
            }
        default:
            break
        }
        return .messaging(command)
    }

    private func route(
        _ room: String, _ command: RoomCommand, claims: AccessClaims, caller: Caller, state: inout SessionState, now: Int64, rooms: () -> Set<String>,
        relayedTo: (String) -> String?
    ) -> Route {
        guard claims.allows(room: room) else { return .refuse(ProtocolError(.forbidden, "your token is for room \(claims.room ?? "")")) }
        let limits = state.limits
        switch command {
        case .sendChat, .sendEmoji:
            guard state.admitChat(now: now) else {
                return .refuse(ProtocolError(.rateLimited, "too many messages: at most \(limits.chatPerSecond) per second across all rooms"))
            }
        case .offerWebRTC:
            guard state.admitOffer(now: now) else { return .refuse(tooManyOffers(limits)) }
        case .join, .sync, .listMembers, .chatHistory, .giftLeaders:
            guard state.admitRead(now: now) else {
                return .refuse(ProtocolError(
                    .rateLimited, "too much read: answers to joins, syncs, member lists and history of at most \(limits.answerBytesPerSecond) bytes a second"))
            }
        default:
            break
        }
        var route = RoomRoute(room: room, command: command, creation: nil, placing: false)
        let ownedLimit = caller.grants.admin ? nil : roomsPerUser
        switch command {
        case .create(let settings):
            if let refusal = overRooms(room, rooms()) { return .refuse(refusal) }
            guard caller.grants.create else { return .refuse(ProtocolError(.forbidden, "your token does not grant create")) }
            route.creation = .init(settings: settings, owner: caller.id, ownedLimit: ownedLimit, mustBeNew: true, allowed: true)
            route.command = .join(create: nil)
            route.placing = true
        case .join(let create):
            if let refusal = overRooms(room, rooms()) { return .refuse(refusal) }
            guard caller.grants.join else { return .refuse(ProtocolError(.forbidden, "your token does not grant join")) }
            route.creation = create.map { .init(settings: $0, owner: caller.id, ownedLimit: ownedLimit, mustBeNew: false, allowed: caller.grants.create) }
            route.placing = true
        default:
            break
        }
        if let node = relayedTo(room) { return .relay(route, node: node) }
        return .room(route)
    }

    /// Why the user may not enter `room` beside the rooms it is in (nil: it may).
    private func overRooms(_ room: String, _ current: Set<String>) -> ProtocolError? {
        guard !current.contains(room), current.count >= roomsPerConnection else { return nil }
        return ProtocolError(.forbidden, "you are in \(current.count) rooms, the most one user may be in at once; leave one first")
    }

    /// The answer to an offer over the connection's offer rate (`webrtc.offer`, `echo.start` with `sdp`).
    private func tooManyOffers(_ limits: SessionState.Limits) -> ProtocolError {
        ProtocolError(.rateLimited, "too many WebRTC offers: at most \(limits.offersPerSecond.formatted()) a second after \(limits.offerBurst)")
    }
}
