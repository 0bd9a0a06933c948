import MajlisProtocol

extension RoomEngine {
    /// Every broken invariant, described; empty when the room is consistent.
    public func invariantViolations() -> [String] {
        var problems: [String] = []
        var seated = Set<String>()
        for (position, seat) in seats.enumerated() {
            if seat.index != position { problems.append("seat \(position) has index \(seat.index)") }
            switch seat.state {
            case .occupied:
                guard let user = seat.user else {
                    problems.append("seat \(position) is occupied by no one")
                    continue
                }
                if !seated.insert(user).inserted { problems.append("\(user) holds two seats") }
                if members[user] == nil { problems.append("\(user) is seated but not a member") }
            case .locked, .empty:
                if seat.user != nil { problems.append("seat \(position) is \(seat.state) but has a user") }
                if seat.state == .empty && seat.micOn { problems.append("empty seat \(position) has its mic on") }
            }
        }
        if Set(joinOrder) != Set(members.keys) || joinOrder.count != members.count {
            problems.append("join order and members disagree")
        }
        for (key, holder) in nameHolders where members[holder].map({ DisplayName.comparisonKey($0.name) }) != key {
            problems.append("name \(key) is held by \(holder), who is not a member by that name")
        }
        var requesters = Set<String>()
        if Set(requestOrder) != Set(requests.keys) { problems.append("request order and requests disagree") }
        for request in requests.values {
            if members[request.user] == nil { problems.append("request \(request.id) of non-member \(request.user)") }
            if seated.contains(request.user) { problems.append("request \(request.id) of seated \(request.user)") }
            if !requesters.insert(request.user).inserted { problems.append("\(request.user) has two requests") }
        }
        if away.keys.contains(where: { members[$0] == nil }) { problems.append("a non-member is away") }
        if pendingJoined.contains(where: { members[$0] == nil }) { problems.append("a pending join of a non-member") }
        if pendingLeft.contains(where: { members[$0] != nil }) { problems.append("a pending leave of a member") }
        if attributes.count > limits.attributeKeys { problems.append("too many attributes") }
        if admins.contains(owner) { problems.append("the owner is listed as an admin") }
        return problems
    }
}
