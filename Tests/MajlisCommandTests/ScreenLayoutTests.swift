import MajlisKit
import MajlisProtocol
import Testing

@testable import majlis

@Suite struct ScreenLayoutTests {
    func room() -> RoomState {
        var state = RoomState(roomId: "majlis")
        state.status = .joined
        state.me = "omar"
        state.room = RoomInfo(id: "majlis", title: "مجلس", owner: "huda", mode: .request, seatCount: 4, announcement: "", chatMutedAll: false, createdAt: 0, memberCount: 2, maxMembers: 0)
        state.memberCount = 2
        state.members = [
            Member(id: "huda", name: "هدى", avatar: "", role: .owner, seat: 0, chatMuted: false, joinedAt: 0),
            Member(id: "omar", name: "عمر", avatar: "", role: .member, seat: nil, chatMuted: false, joinedAt: 0),
        ]
        state.seats = (0..<4).map { Seat(index: $0) }
        state.seats[0] = Seat(index: 0, state: .occupied, user: "huda", muted: false, micOn: true)
        state.chat = [ChatMessage(msgId: 1, from: UserRef(id: "huda", name: "هدى"), type: "text", text: "أهلاً 你好 👋", payload: nil, ts: 0)]
        state.requestStatus = .pending
        return state
    }

    func layout(_ language: Language, columns: Int = 80) -> ScreenLayout {
        ScreenLayout(rows: 24, columns: columns, presenter: VoiceRoomPresenter(language: language))
    }

    /// The line of keys is whole on an 80-column terminal, the host's keys at its end included.
    @Test func theKeyLineFitsEightyColumns() {
        for language in Language.allCases {
            for key in [Strings.Key.keys, .keysRequests, .keysInvite] {
                #expect(DisplayWidth.columns(Strings.text(key, language)) <= 80, "\(language) \(key)")
            }
        }
    }

    /// The sound line (the longest: no sound server) is whole on an 80-column terminal, over two
    /// lines where it must, in every language.
    @Test func theNoSoundLineIsWholeOnEightyColumns() {
        for language in Language.allCases {
            let layout = layout(language)
            let text = Strings.text(.noSound, language)
            let lines = layout.wrap(text, lines: 2)
            #expect(lines.count <= 2 && lines.allSatisfy { DisplayWidth.columns($0) <= 80 }, "\(language): \(lines)")
            let joined = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: language == .english || language == .arabic ? " " : "")
            #expect(!joined.contains("…") && joined.filter { !$0.isWhitespace } == text.filter { !$0.isWhitespace }, "\(language): \(lines)")
        }
    }

    @Test func widthsCountColumnsNotCharacters() {
        #expect(DisplayWidth.columns("abc") == 3)
        #expect(DisplayWidth.columns("你好") == 4)
        #expect(DisplayWidth.columns("مُحَمَّد") == 4)  // vowel marks take no column
        #expect(DisplayWidth.columns("👋🏽") == 4)
        #expect(DisplayWidth.truncate("你好世界", to: 5) == "你好…")
    }

    @Test func arabicIsMirroredAndTranslated() {
        let arabic = layout(.arabic)
        let lines = arabic.lines(arabic.presenter.present(room()), input: nil, note: nil)
        #expect(lines.count == 24)
        // Every line fills the width exactly or less, in terminal columns; text lines are flush right.
        #expect(lines.allSatisfy { DisplayWidth.columns($0) <= 80 })
        let header = lines[0]
        #expect(header.hasSuffix("مجلس · عضوان · اطلب التحدث") && header.hasPrefix(" "))
        // Seats run from the right: seat 1 is the rightmost cell.
        let seats = lines.first { $0.contains("1. ") }!
        #expect(seats.range(of: "1. ")!.lowerBound > seats.range(of: "2. ")!.lowerBound)
        #expect(seats.contains("1. هدى (المضيف) [م"))  // cut to its cell at 80 columns
        let wide = layout(.arabic, columns: 120)
        #expect(wide.lines(wide.presenter.present(room()), input: nil, note: nil).contains { $0.contains("1. هدى (المضيف) [مايك]") })
        #expect(lines.contains { $0.hasSuffix(" الدردشة ─") })
        #expect(lines.contains { $0.hasSuffix("طلبت التحدث: بانتظار المضيف") })
        #expect(lines.contains { $0.hasSuffix("هدى: أهلاً 你好 👋") })
        #expect(lines.contains { $0.contains("q خروج  t/1-9 مقعد") })
        // Nothing English on the Arabic screen but the key letters and the room's own id.
        let words = lines.joined(separator: " ").split(whereSeparator: { !$0.isLetter }).filter { $0.allSatisfy(\.isASCII) && $0.count > 1 }
        #expect(words.isEmpty, "\(words)")
    }

    @Test func englishStaysLeftToRightAndTheMemberPanelListsHostsFirst() {
        let english = layout(.english, columns: 60)
        let lines = english.lines(english.presenter.present(room()), panel: .members, input: "سلام", note: nil)
        #expect(lines[0].hasPrefix("مجلس · 2 members · Ask to speak"))
        #expect(lines.contains { $0.hasPrefix("─ members ─") })
        let hosts = lines.firstIndex { $0 == "  هدى (host) · Seat 1" }
        let others = lines.firstIndex { $0 == "  You" }
        #expect(hosts != nil && others != nil && hosts! < others!)
        #expect(lines.last == "> سلام_")
        #expect(lines.allSatisfy { DisplayWidth.columns($0) <= 60 })
    }

    @Test func whatMembersTypeCannotDriveTheTerminal() {
        #expect(ScreenLayout.printable("hi\u{1B}[2J\u{202E}x") == "hi\u{FFFD}[2J\u{FFFD}x")
    }
}
