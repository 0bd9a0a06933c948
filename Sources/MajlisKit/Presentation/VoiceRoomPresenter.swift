import Foundation
import MajlisProtocol

/// Maps a `RoomState` to what the screen shows. Pure: the same state, time and language always
/// give the same view model.
public struct VoiceRoomPresenter: Sendable {
    public var language: Language
    /// Messages further apart than this (ms) get a time separator between them.
    public var separatorGap: Int64 = 5 * 60 * 1000
    /// A level above this counts as speaking.
    public var speakingLevel = 10
    public var timeZone: TimeZone

    public init(language: Language = .english, timeZone: TimeZone = .current) {
        self.language = language
        self.timeZone = timeZone
    }

    public func text(_ key: Strings.Key) -> String { Strings.text(key, language) }

    /// Why an intent did not work, in plain words of the user's language.
    public func describe(_ error: MajlisError) -> String {
        switch error {
        case .server(let refusal): return text(.error(refusal.code))
        case .timedOut: return text(.noAnswer)
        case .notConnected, .unreachable: return text(.notConnected)
        case .closed(_, let reason): return text(.connectionClosed(reason))
        case .invalidResponse: return text(.unreadableAnswer)
        case .misuse(let detail): return detail
        }
    }

    public func present(_ state: RoomState) -> RoomViewModel {
        let names = Dictionary(state.members.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let room = state.room
        let mode = room?.mode == .request ? text(.requestMode) : text(.freeMode)
        return RoomViewModel(
            title: room?.title.isEmpty == false ? room!.title : state.roomId,
            subtitle: "\(text(.members(state.memberCount))) · \(mode)",
            announcement: room?.announcement ?? "",
            isRightToLeft: language.isRightToLeft,
            seats: state.seats.map { tile($0, state: state, names: names) },
            chat: chatRows(state),
            members: memberRows(state),
            requests: state.isModerator
                ? state.requests.map { RequestRow(requestId: $0.id, userId: $0.user, text: text(.wantsToSpeak(names[$0.user] ?? $0.user))) } : [],
            banners: banners(state, names: names),
            canTakeSeat: state.status == .joined && state.mySeat == nil && (room?.mode == .free || state.isModerator)
                && state.seats.contains { $0.state == .empty },
            canRequestSeat: state.status == .joined && state.mySeat == nil && state.myRequest == nil && room?.mode == .request
                && !state.isModerator,
            canSendChat: state.status == .joined && !state.chatMuted && (room?.chatMutedAll != true || state.isModerator))
    }

    func tile(_ seat: Seat, state: RoomState, names: [String: String]) -> SeatTile {
        switch seat.state {
        case .locked:
            return SeatTile(index: seat.index, kind: .locked, title: text(.lockedSeat), micOn: false, hostMuted: seat.muted, speaking: false, isMe: false)
        case .empty:
            return SeatTile(index: seat.index, kind: .empty, title: text(.seat(seat.index + 1)), micOn: false, hostMuted: seat.muted, speaking: false, isMe: false)
        case .occupied:
            let user = seat.user ?? ""
            let isMe = user == state.me
            let audible = seat.micOn && !seat.muted
            return SeatTile(
                index: seat.index, kind: .occupied(userId: user), title: isMe ? text(.you) : names[user] ?? user,
                mark: mark(role(of: user, in: state)), micOn: seat.micOn, hostMuted: seat.muted,
                speaking: audible && (state.levels[user] ?? 0) > speakingLevel, isMe: isMe)
        }
    }

    /// A member's role as this client knows it (the room's owner field wins).
    func role(of user: String, in state: RoomState) -> Role {
        if user == state.room?.owner { return .owner }
        if user == state.me { return state.role == .owner ? .admin : state.role }
        return state.member(user)?.role == .owner ? .admin : state.member(user)?.role ?? .member
    }

    func mark(_ role: Role) -> String {
        switch role {
        case .owner: return text(.host)
        case .admin: return text(.admin)
        case .member: return ""
        }
    }

    func memberRows(_ state: RoomState) -> [MemberRow] {
        let rank: [Role: Int] = [.owner: 0, .admin: 1, .member: 2]
        let rows = state.members.enumerated().map { offset, member -> (Int, Int, MemberRow) in
            let role = role(of: member.id, in: state)
            let seat = state.seats.first { $0.user == member.id && $0.state == .occupied }?.index
            let isMe = member.id == state.me
            return (rank[role] ?? 2, offset, MemberRow(userId: member.id, name: isMe ? text(.you) : member.name, mark: mark(role), seatNumber: seat.map { $0 + 1 }, isMe: isMe))
        }
        return rows.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }

    /// Chat messages and join/leave notices in time order, with time separators.
    func chatRows(_ state: RoomState) -> [ChatRow] {
        enum Item {
            case message(ChatMessage)
            case notice(RoomNotice)
        }
        var items = state.chat.map { (at: $0.ts, item: Item.message($0)) }
        for notice in state.notices {
            // After every message at or before it (stable for equal times).
            let position = items.firstIndex { $0.at > notice.at } ?? items.endIndex
            items.insert((notice.at, .notice(notice)), at: position)
        }
        var rows: [ChatRow] = []
        var previous: Int64?
        for (at, item) in items {
            if previous == nil || at - previous! > separatorGap { rows.append(.time(timeText(at, after: previous))) }
            previous = at
            switch item {
            case .message(let message):
                rows.append(.message(id: message.msgId, sender: message.from.name, text: message.text ?? "[\(message.type)]", isMine: message.from.id == state.me))
            case .notice(let notice):
                switch notice.kind {
                case .joined: rows.append(.notice(text(.memberJoined(notice.name))))
                case .left(let reason) where reason == "kicked" || reason == "banned": rows.append(.notice(text(.memberRemoved(notice.name))))
                case .left: rows.append(.notice(text(.memberLeft(notice.name))))
                }
            }
        }
        return rows
    }

    /// "21:05", with the date when the day changed since the previous message.
    func timeText(_ ts: Int64, after previous: Int64?) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let date = Date(timeIntervalSince1970: Double(ts) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
        if let previous, calendar.isDate(Date(timeIntervalSince1970: Double(previous) / 1000), inSameDayAs: date) { return time }
        if previous == nil { return time }
        return String(format: "%04d-%02d-%02d ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0) + time
    }

    /// The state of this user's request to speak, while it matters: pending until answered, an
    /// acceptance while on that seat, a refusal or expiry until the user is seated or asks again.
    func requestBanner(_ state: RoomState) -> Strings.Key? {
        guard state.status == .joined || state.status == .reconnecting else { return nil }
        switch state.requestStatus {
        case nil: return nil
        case .pending: return .requestPending
        case .accepted(let index): return state.mySeat == index ? .requestAccepted(seat: index + 1) : nil
        case .rejected: return state.mySeat == nil ? .requestRejected : nil
        case .cancelled: return state.mySeat == nil ? .requestCancelled : nil
        case .expired: return state.mySeat == nil ? .requestExpired : nil
        }
    }

    func banners(_ state: RoomState, names: [String: String]) -> [Banner] {
        var banners: [Banner] = []
        switch state.status {
        case .ended: banners.append(Banner(kind: .roomEnded, text: text(.roomEnded)))
        case .kicked(let by, _): banners.append(Banner(kind: .kicked, text: text(.kicked(names[by] ?? by))))
        case .left: banners.append(Banner(kind: .left, text: text(.left)))
        case .failed(let reason): banners.append(Banner(kind: .failed, text: text(.failed(reason))))
        case .reconnecting: banners.append(Banner(kind: .reconnecting, text: text(.reconnecting)))
        case .idle, .joining, .joined: break
        }
        if state.networkQuality?.isDegraded == true { banners.append(Banner(kind: .networkPoor, text: text(.networkPoor))) }
        if state.tokenExpiresAt != nil { banners.append(Banner(kind: .tokenExpiring, text: text(.tokenExpiring))) }
        if state.chatMuted {
            banners.append(Banner(kind: .chatMuted, text: text(.chatMuted)))
        } else if state.room?.chatMutedAll == true && !state.isModerator {
            banners.append(Banner(kind: .chatMuted, text: text(.chatMutedForAll)))
        }
        if let request = requestBanner(state) { banners.append(Banner(kind: .request, text: text(request))) }
        if let invite = state.invite { banners.append(Banner(kind: .invite, text: text(.invitedToSeat(names[invite.from] ?? invite.from)))) }
        return banners
    }
}
