import Foundation
import MajlisKit
import MajlisProtocol
import Testing

@Suite struct PresenterTests {
    let utc = TimeZone(identifier: "UTC")!

    func state(mode: RoomMode = .free, role: Role = .member) -> RoomState {
        var state = RoomState(roomId: "r1")
        state.status = .joined
        state.me = "me"
        state.role = role
        state.room = RoomInfo(id: "r1", title: "Majlis", owner: "host", mode: mode, seatCount: 4, announcement: "Welcome", chatMutedAll: false, createdAt: 0, memberCount: 3, maxMembers: 0)
        state.memberCount = 3
        state.members = [
            Member(id: "host", name: "Huda", avatar: "", role: .owner, seat: 0, chatMuted: false, joinedAt: 0),
            Member(id: "me", name: "Me", avatar: "", role: role, seat: nil, chatMuted: false, joinedAt: 0),
            Member(id: "omar", name: "Omar", avatar: "", role: .member, seat: 2, chatMuted: false, joinedAt: 0),
        ]
        state.seats = [
            Seat(index: 0, state: .occupied, user: "host", muted: false, micOn: true),
            Seat(index: 1, state: .locked),
            Seat(index: 2, state: .occupied, user: "omar", muted: true, micOn: true),
            Seat(index: 3),
        ]
        return state
    }

    @Test func everySeatState() {
        var room = state()
        room.levels = ["host": 40, "omar": 60]
        let view = VoiceRoomPresenter(language: .english, timeZone: utc).present(room)
        #expect(view.seats == [
            SeatTile(index: 0, kind: .occupied(userId: "host"), title: "Huda", mark: "host", micOn: true, hostMuted: false, speaking: true, isMe: false),
            SeatTile(index: 1, kind: .locked, title: "Locked", micOn: false, hostMuted: false, speaking: false, isMe: false),
            // Host-muted: never drawn as speaking, whatever the level says.
            SeatTile(index: 2, kind: .occupied(userId: "omar"), title: "Omar", micOn: true, hostMuted: true, speaking: false, isMe: false),
            SeatTile(index: 3, kind: .empty, title: "Seat 4", micOn: false, hostMuted: false, speaking: false, isMe: false),
        ])
        #expect(view.title == "Majlis")
        #expect(view.subtitle == "3 members · Open seats")
        #expect(view.canTakeSeat && !view.canRequestSeat && view.canSendChat)

        room.seats[3] = Seat(index: 3, state: .occupied, user: "me", muted: false, micOn: false)
        let seated = VoiceRoomPresenter(language: .english, timeZone: utc).present(room)
        #expect(seated.seats[3] == SeatTile(index: 3, kind: .occupied(userId: "me"), title: "You", micOn: false, hostMuted: false, speaking: false, isMe: true))
        #expect(!seated.canTakeSeat)
    }

    @Test func chatGetsTimeSeparatorsFiveMinutesApart() {
        var room = state()
        let base: Int64 = 1_795_000_000_000  // 2026-11-18 11:06:40 UTC
        func message(_ id: Int64, _ at: Int64, _ from: String = "omar") -> ChatMessage {
            ChatMessage(msgId: id, from: UserRef(id: from, name: from == "me" ? "Me" : "Omar"), type: "text", text: "m\(id)", payload: nil, ts: at)
        }
        room.chat = [
            message(1, base), message(2, base + 60_000, "me"), message(3, base + 60_000 + 300_000),
            message(4, base + 60_000 + 300_001 + 300_000), message(5, base + 86_400_000),
        ]
        let rows = VoiceRoomPresenter(language: .english, timeZone: utc).present(room).chat
        #expect(rows == [
            .time("11:06"), .message(id: 1, sender: "Omar", text: "m1", isMine: false),
            .message(id: 2, sender: "Me", text: "m2", isMine: true),
            .message(id: 3, sender: "Omar", text: "m3", isMine: false),  // exactly five minutes: no separator
            .time("11:17"), .message(id: 4, sender: "Omar", text: "m4", isMine: false),
            .time("2026-11-19 11:06"), .message(id: 5, sender: "Omar", text: "m5", isMine: false),
        ])
    }

    @Test func hostSeesRequestsOthersDoNot() {
        var room = state(mode: .request, role: .owner)
        room.requests = [SeatRequest(id: "q1", user: "omar", index: nil, createdAt: 0)]
        let host = VoiceRoomPresenter(language: .english).present(room)
        #expect(host.requests == [RequestRow(requestId: "q1", userId: "omar", text: "Omar wants to speak")])
        #expect(host.canTakeSeat && !host.canRequestSeat)
        var member = state(mode: .request)
        member.requests = room.requests
        let view = VoiceRoomPresenter(language: .english).present(member)
        #expect(view.requests.isEmpty)
        #expect(!view.canTakeSeat && view.canRequestSeat)
        #expect(view.subtitle == "3 members · Ask to speak")
    }

    @Test func banners() {
        var room = state()
        room.status = .reconnecting
        room.networkQuality = .poor
        room.chatMuted = true
        room.invite = RoomState.Invite(inviteId: "i1", from: "host", index: 3)
        let view = VoiceRoomPresenter(language: .english).present(room)
        #expect(view.banners.map(\.kind) == [.reconnecting, .networkPoor, .chatMuted, .invite])
        #expect(view.banners.last?.text == "Huda invited you to speak")
        #expect(!view.canSendChat)

        room = state()
        room.status = .kicked(by: "host", until: nil)
        #expect(VoiceRoomPresenter(language: .english).present(room).banners == [Banner(kind: .kicked, text: "You were removed from the room by Huda")])
        room.status = .ended(reason: "ended")
        #expect(VoiceRoomPresenter(language: .english).present(room).banners.map(\.kind) == [.roomEnded])
        room = state()
        room.room?.chatMutedAll = true
        #expect(VoiceRoomPresenter(language: .english).present(room).banners == [Banner(kind: .chatMuted, text: "Chat is muted for everyone")])
        room.role = .admin
        #expect(VoiceRoomPresenter(language: .english).present(room).canSendChat)
    }

    /// One of each string key (every error code included).
    static let everyKey: [Strings.Key] = [
        .seat(1), .lockedSeat, .you, .members(2), .wantsToSpeak("A"), .reconnecting, .networkPoor, .kicked("A"), .kicked(""),
        .roomEnded, .chatMuted, .chatMutedForAll, .tokenExpiring, .left, .invitedToSeat("A"), .failed("x"), .requestMode, .freeMode,
        .host, .admin, .micOn, .micOff, .seatMuted, .requestPending, .requestAccepted(seat: 2), .requestRejected, .requestCancelled,
        .requestExpired, .askedInstead, .memberJoined("A"), .memberLeft("A"), .memberRemoved("A"), .noAnswer, .notConnected,
        .connectionClosed("x"), .unreadableAnswer, .keys, .keysInvite, .acceptOrReject, .pressToChat, .sectionRequests, .sectionChat,
        .sectionMembers, .pressToQuit, .sound("PulseAudio"), .noSound, .voiceProcessing(true), .voiceProcessing(false), .voiceEffect("x"),
        .music(playing: true), .music(playing: false), .noMusic, .spatialSound(true), .spatialSound(false),
    ] + ErrorCode.allCases.map { .error($0) } + VoiceEffect.Preset.allCases.map { .effectPreset($0) }

    @Test func theRequestToSpeakIsShownWhileItMatters() {
        let presenter = VoiceRoomPresenter(language: .english)
        func banner(_ status: RoomState.RequestStatus?, seat: Int? = nil) -> String? {
            var room = state(mode: .request)
            room.requestStatus = status
            if let seat { room.seats[seat] = Seat(index: seat, state: .occupied, user: "me", muted: false, micOn: true) }
            return presenter.present(room).banners.first { $0.kind == .request }?.text
        }
        #expect(banner(nil) == nil)
        #expect(banner(.pending) == "You asked to speak: waiting for the host")
        #expect(banner(.accepted(index: 3), seat: 3) == "The host accepted: you are on seat 4")
        #expect(banner(.accepted(index: 3)) == nil)  // left that seat since
        #expect(banner(.rejected) == "The host declined your request to speak")
        #expect(banner(.rejected, seat: 3) == nil)  // seated another way since
        #expect(banner(.cancelled) == "You withdrew your request to speak")
        #expect(banner(.expired) == "Nobody answered your request to speak in time")
        #expect(VoiceRoomPresenter(language: .arabic).present({ var room = state(mode: .request); room.requestStatus = .pending; return room }())
            .banners.map(\.text) == ["طلبت التحدث: بانتظار المضيف"])
    }

    @Test func noticesSitBetweenChatMessagesInTimeOrder() {
        var room = state()
        let minute: Int64 = 60_000
        room.chat = [1, 3].map { ChatMessage(msgId: $0, from: UserRef(id: "omar", name: "Omar"), type: "text", text: "m\($0)", payload: nil, ts: $0 * minute) }
        room.notices = [
            RoomNotice(kind: .joined, user: "sara", name: "Sara", at: 2 * minute),
            RoomNotice(kind: .left(reason: "kicked"), user: "sara", name: "Sara", at: 3 * minute),
            RoomNotice(kind: .left(reason: "left"), user: "omar", name: "Omar", at: 20 * minute),
        ]
        let rows = VoiceRoomPresenter(language: .english, timeZone: utc).present(room).chat
        #expect(rows == [
            .time("00:01"), .message(id: 1, sender: "Omar", text: "m1", isMine: false), .notice("Sara joined"),
            .message(id: 3, sender: "Omar", text: "m3", isMine: false), .notice("Sara was removed"), .time("00:20"), .notice("Omar left"),
        ])
    }

    @Test func membersListHostsFirstAndSeatsShowWhoHostsTheRoom() {
        var room = state()
        room.members.append(Member(id: "zaid", name: "Zaid", avatar: "", role: .admin, seat: nil, chatMuted: false, joinedAt: 0))
        let view = VoiceRoomPresenter(language: .english).present(room)
        #expect(view.members.map(\.name) == ["Huda", "Zaid", "You", "Omar"])
        #expect(view.members.map(\.mark) == ["host", "admin", "", ""])
        #expect(view.members.map(\.seatNumber) == [1, nil, nil, 3])
        #expect(view.seats[0].mark == "host" && view.seats[2].mark == "")
        #expect(VoiceRoomPresenter(language: .simplifiedChinese).present(room).seats[0].mark == "房主")
    }

    @Test func errorsInPlainWords() {
        let presenter = VoiceRoomPresenter(language: .english)
        #expect(presenter.describe(.server(ProtocolError(.approvalRequired, "approval_required: use request.create"))) == "In this room you ask to speak first")
        #expect(presenter.describe(.timedOut(op: "seat.take")) == "The server did not answer; try again")
        #expect(VoiceRoomPresenter(language: .arabic).describe(.server(ProtocolError(.seatOccupied, "taken"))) == "هذا المقعد مشغول")
    }

    /// Arabic counts in its six plural forms.
    @Test func arabicCountsTakeTheirPluralForms() {
        let counts = [0, 1, 2, 3, 10, 11, 99, 100, 102, 103, 111].map { Strings.text(.members($0), .arabic) }
        #expect(counts == ["لا أعضاء", "عضو واحد", "عضوان", "3 أعضاء", "10 أعضاء", "11 عضوًا", "99 عضوًا", "100 عضو", "102 عضو", "103 أعضاء", "111 عضوًا"])
    }

    @Test func arabicIsRightToLeftAndEveryLanguageHasEveryString() {
        let room = state()
        let arabic = VoiceRoomPresenter(language: .arabic).present(room)
        #expect(arabic.isRightToLeft)
        #expect(arabic.seats[3].title == "المقعد 4")
        #expect(arabic.seats[1].title == "مقفل")
        let chinese = VoiceRoomPresenter(language: .simplifiedChinese).present(room)
        #expect(!chinese.isRightToLeft)
        #expect(chinese.seats[3].title == "4号麦")
        #expect(chinese.subtitle == "3人在线 · 自由上麦")
        #expect(Language(localeIdentifier: "ar_SA") == .arabic)
        #expect(Language(localeIdentifier: "zh-Hans-CN") == .simplifiedChinese)
        #expect(Language(localeIdentifier: "ja_JP") == .japanese)
        #expect(Language(localeIdentifier: "fr_FR") == .english)
        let japanese = VoiceRoomPresenter(language: .japanese).present(room)
        #expect(!japanese.isRightToLeft && japanese.seats[3].title == "4番席" && japanese.subtitle.hasPrefix("3人 · "))
        for language in Language.allCases {
            let texts = Self.everyKey.map { Strings.text($0, language) }
            #expect(texts.allSatisfy { !$0.isEmpty })
            #expect(Set(texts).count == texts.count, "\(language) repeats a string")
        }
        // Every string is translated: none of the Chinese or Arabic ones is the English one.
        for key in Self.everyKey {
            let english = Strings.text(key, .english)
            #expect(Strings.text(key, .arabic) != english, "\(key) is not in Arabic")
            #expect(Strings.text(key, .simplifiedChinese) != english, "\(key) is not in Chinese")
        }
        // The three languages really differ.
        #expect(Strings.text(.roomEnded, .english) != Strings.text(.roomEnded, .arabic))
        #expect(Strings.text(.roomEnded, .english) != Strings.text(.roomEnded, .simplifiedChinese))
    }
}
