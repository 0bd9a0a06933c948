/// How many terminal columns text takes: wide (East Asian) characters and emoji take two,
/// combining marks (Arabic vowel marks among them) and joiners none, everything else one.
enum DisplayWidth {
    static func columns(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + columns(of: $1) }
    }

    static func columns(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if value == 0x200B || (0xFE00...0xFE0F).contains(value) { return 0 }
        if isWide(value) { return 2 }
        return 1
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// The longest prefix of `text` that fits in `width` columns, with "…" when cut.
    static func truncate(_ text: String, to width: Int) -> String {
        guard columns(text) > width else { return text }
        guard width > 0 else { return "" }
        var used = 0
        var kept = ""
        for character in text {
            let size = columns(String(character))
            if used + size > width - 1 { break }
            used += size
            kept.append(character)
        }
        return kept + "…"
    }

    /// `text` padded with spaces to `width` columns, on the right (or the left, for right to left).
    static func pad(_ text: String, to width: Int, leading: Bool = false) -> String {
        let gap = String(repeating: " ", count: max(0, width - columns(text)))
        return leading ? gap + text : text + gap
    }
}
