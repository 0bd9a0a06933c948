import MajlisKit

/// Lays the room out as lines of text for a terminal of a given size. Pure.
struct ScreenLayout {
    var rows: Int
    var columns: Int

    static let keys = "t/1-9 take seat · l leave · r ask · a/x accept/reject · m mic · c chat · q quit"

    /// One line of the screen: printable (whatever a room's members typed, no control or
    /// format character reaches the terminal) and at most `columns` wide.
    func fit(_ raw: String) -> String {
        let text = Self.printable(raw)
        return text.count <= columns ? text : String(text.prefix(max(0, columns - 1))) + "…"
    }

    /// `text` with control and format characters (escape sequences, bidi overrides) shown as `�`.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnprintable) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isUnprintable($0) ? "\u{FFFD}" : $0 }))
    }

    private static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format: return scalar.value != 0x200C && scalar.value != 0x200D
        default: return false
        }
    }

    func rule(_ title: String = "") -> String {
        let head = title.isEmpty ? "" : "─ \(title) "
        return fit(head + String(repeating: "─", count: max(0, columns - head.count)))
    }

    func seatText(_ tile: SeatTile) -> String {
        var marks = ""
        switch tile.kind {
        case .locked: marks = ""
        case .empty: marks = tile.hostMuted ? " (muted)" : ""
        case .occupied:
            marks = tile.hostMuted ? " [MUTED]" : tile.micOn ? " [mic]" : " [off]"
            if tile.speaking { marks += " *" }
        }
        return "\(tile.index + 1). \(tile.title)\(marks)"
    }

    /// The screen: header, seats, requests (hosts), chat filling the rest, status and input lines.
    func lines(_ view: RoomViewModel, input: String?, note: String?) -> [String] {
        var top: [String] = []
        let header = "\(view.title) · \(view.subtitle)"
        top.append(fit(header))
        if !view.announcement.isEmpty { top.append(fit(view.announcement)) }
        top.append(rule())
        let cell = max(18, columns / 4)
        var line = ""
        for tile in view.seats {
            var text = seatText(tile)
            if text.count > cell - 1 { text = String(text.prefix(cell - 2)) + "…" }
            let padded = text.padding(toLength: cell, withPad: " ", startingAt: 0)
            if line.count + padded.count > columns {
                top.append(fit(line))
                line = ""
            }
            line += padded
        }
        if !line.isEmpty { top.append(fit(line)) }
        if !view.requests.isEmpty {
            top.append(rule("requests"))
            for request in view.requests.prefix(3) { top.append(fit("  \(request.text)   [a]ccept [x]reject")) }
        }
        top.append(rule("chat"))
        var bottom: [String] = []
        bottom.append(rule())
        let status = note ?? view.banners.first?.text ?? Self.keys
        bottom.append(fit(status))
        bottom.append(fit(input.map { "> \($0)_" } ?? (view.canSendChat ? "press c to chat" : "")))
        let chatRoom = max(0, rows - top.count - bottom.count)
        let chat = view.chat.map { row -> String in
            switch row {
            case .time(let text): return fit("            \(text)")
            case .message(_, let sender, let text, let isMine): return fit("\(isMine ? "›" : " ") \(sender): \(text)")
            }
        }
        var middle = Array(chat.suffix(chatRoom))
        while middle.count < chatRoom { middle.append("") }
        return Array((top + middle + bottom).prefix(rows))
    }
}
