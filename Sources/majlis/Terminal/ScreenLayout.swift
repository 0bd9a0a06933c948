import MajlisKit

/// Lays the room out as lines of text for a terminal of a given size, in the presenter's
/// language: mirrored for right-to-left languages (lines flush right, seats from the right).
/// Widths are in terminal columns (wide characters take two). Pure.
struct ScreenLayout {
    /// What fills the middle of the screen.
    enum Panel {
        case chat, members
    }

    var rows: Int
    var columns: Int
    var presenter = VoiceRoomPresenter()

    var rightToLeft: Bool { presenter.language.isRightToLeft }

    func text(_ key: Strings.Key) -> String { presenter.text(key) }

    /// One line of the screen: printable (whatever a room's members typed, no control or
    /// format character reaches the terminal), at most `columns` wide, flush right when mirrored.
    func fit(_ raw: String) -> String {
        let line = DisplayWidth.truncate(Self.printable(raw), to: columns)
        return rightToLeft ? DisplayWidth.pad(line, to: columns, leading: true) : line
    }

    /// `raw` over at most `count` lines (broken at a space where the line has one, else between
    /// characters, as Chinese and Japanese are), the last one cut to fit.
    func wrap(_ raw: String, lines count: Int) -> [String] {
        var rest = Substring(Self.printable(raw))
        var lines: [String] = []
        while !rest.isEmpty, lines.count < count - 1, DisplayWidth.columns(rest) > columns {
            var width = 0
            var end = rest.startIndex
            while end < rest.endIndex, width + DisplayWidth.columns(String(rest[end])) <= columns {
                width += DisplayWidth.columns(String(rest[end]))
                end = rest.index(after: end)
            }
            if let space = rest[..<end].lastIndex(of: " "), space > rest.startIndex { end = space }
            lines.append(fit(String(rest[..<end])))
            rest = rest[end...].drop { $0 == " " }
        }
        if !rest.isEmpty { lines.append(fit(String(rest))) }
        return lines
    }

    /// `text` with control and format characters (escape sequences, bidi overrides) shown as `�`.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isUnprintable($0) ? "\u{FFFD}" : $0 }))
    }

    private static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format: return ![0x200C, 0x200D, 0x200E, 0x200F].contains(scalar.value)
        default: return false
        }
    }

    /// A horizontal rule, its title at the start of the line (the right end when mirrored).
    func rule(_ title: String = "") -> String {
        let label = title.isEmpty ? "" : rightToLeft ? " \(Self.printable(title)) ─" : "─ \(Self.printable(title)) "
        let dashes = String(repeating: "─", count: max(0, columns - DisplayWidth.columns(label)))
        return DisplayWidth.truncate(rightToLeft ? dashes + label : label + dashes, to: columns)
    }

    func seatText(_ tile: SeatTile) -> String {
        var marks = ""
        switch tile.kind {
        case .locked: marks = ""
        case .empty: marks = tile.hostMuted ? " (\(text(.seatMuted)))" : ""
        case .occupied:
            if !tile.mark.isEmpty { marks += " (\(tile.mark))" }
            marks += " [\(text(tile.hostMuted ? .seatMuted : tile.micOn ? .micOn : .micOff))]"
            if tile.speaking { marks += " *" }
        }
        return "\(tile.index + 1). \(Self.printable(tile.title))\(marks)"
    }

    func memberText(_ row: MemberRow) -> String {
        var line = "  \(Self.printable(row.name))"
        if !row.mark.isEmpty { line += " (\(row.mark))" }
        if let seat = row.seatNumber { line += " · \(text(.seat(seat)))" }
        return line
    }

    /// The screen: header, seats, requests (hosts), chat or members filling the rest, then banners,
    /// the status line and the input line.
    func lines(_ view: RoomViewModel, panel: Panel = .chat, sound: String? = nil, input: String?, note: String?) -> [String] {
        var top: [String] = []
        top.append(fit("\(view.title) · \(view.subtitle)"))
        if let sound { top.append(contentsOf: wrap(sound, lines: 2)) }
        if !view.announcement.isEmpty { top.append(fit(view.announcement)) }
        top.append(rule())
        let cell = max(18, columns / 4)
        var row: [String] = []
        var used = 0
        func flush() {
            guard !row.isEmpty else { return }
            top.append(fit((rightToLeft ? row.reversed() : row).joined()))
            row = []
            used = 0
        }
        for tile in view.seats {
            let padded = DisplayWidth.pad(DisplayWidth.truncate(seatText(tile), to: cell - 1), to: cell, leading: rightToLeft)
            if used + cell > columns { flush() }
            row.append(padded)
            used += cell
        }
        flush()
        if !view.requests.isEmpty {
            top.append(rule(text(.sectionRequests)))
            for request in view.requests.prefix(3) { top.append(fit("  \(request.text)   \(text(.acceptOrReject))")) }
        }
        top.append(rule(text(panel == .chat ? .sectionChat : .sectionMembers)))
        var bottom = [rule()]
        for banner in view.banners.prefix(2) { bottom.append(fit(banner.text)) }
        let keys: Strings.Key = view.banners.contains { $0.kind == .invite } ? .keysInvite : view.requests.isEmpty ? .keys : .keysRequests
        bottom.append(fit(note ?? text(keys)))
        bottom.append(fit(input.map { "> \($0)_" } ?? (view.canSendChat ? text(.pressToChat) : "")))
        let room = max(0, rows - top.count - bottom.count)
        let body: [String]
        switch panel {
        case .chat:
            body = view.chat.map { row -> String in
                switch row {
                case .time(let time): return fit("            \(time)")
                case .message(_, let sender, let text, let isMine): return fit("\(isMine ? "›" : " ") \(sender): \(text)")
                case .notice(let text): return fit("  · \(text)")
                }
            }
        case .members:
            body = view.members.map { fit(memberText($0)) }
        }
        var middle = Array(body.suffix(room))
        if panel == .members { middle = Array(body.prefix(room)) }
        while middle.count < room { middle.append("") }
        return Array((top + middle + bottom).prefix(rows))
    }
}
