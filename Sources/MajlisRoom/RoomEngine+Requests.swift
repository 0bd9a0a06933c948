import MajlisProtocol

extension RoomEngine {
    mutating func createRequest(_ caller: Caller, index: Int?, now: Int64, out: inout RoomOutcome) throws(ProtocolError) -> RoomReply {
        if let index { try checkIndex(index) }
        if let current = seatIndex(of: caller.id) { throw ProtocolError(.alreadySeated, "you are on seat \(current)") }
        if let pending = requests.values.first(where: { $0.user == caller.id }) {
            throw ProtocolError(.alreadyRequested, "you already asked (request \(pending.id))")
        }
        let request = SeatRequest(id: makeId("q"), user: caller.id, index: index, createdAt: now)
        requests[request.id] = request
        requestOrder.append(request.id)
        emit(.moderators, .requestReceived(request), &out)
        return .requestCreated(requestId: request.id)
    }

    mutating func acceptRequest(_ caller: Caller, requestId: String, index: Int?, now: Int64, out: inout RoomOutcome) throws(ProtocolError) {
        try requireModerator(caller)
        guard let request = requests[requestId] else { throw ProtocolError(.requestNotFound, "no request \(requestId)") }
        if let index { try checkIndex(index) }
        let seatIndex = try seatToTake(index ?? request.index)
        emit(.user(request.user), .requestAccepted(requestId: requestId, index: seatIndex), &out)
        endRequest(request, reason: "accepted", out: &out)
        seat(request.user, at: seatIndex, out: &out)
    }

    /// Ends a request: moderators are told why (and the requester too when it expired).
    mutating func endRequest(_ request: SeatRequest, reason: String, out: inout RoomOutcome) {
        guard requests.removeValue(forKey: request.id) != nil else { return }
        requestOrder.removeAll { $0 == request.id }
        let event = ServerEvent.requestCancelled(requestId: request.id, user: request.user, reason: reason)
        emit(.moderators, event, &out)
        if reason == "expired" && !isModerator(request.user) { emit(.user(request.user), event, &out) }
    }
}
