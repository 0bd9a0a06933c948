/// Turns what a terminal in raw mode sends into keys: UTF-8 characters (Arabic, Chinese, emoji,
/// even when a read splits one), control keys, and escape sequences (arrows, function keys),
/// which are recognised and skipped. Pure: bytes in, keys out.
struct KeyDecoder {
    enum Key: Equatable {
        case character(Character)
        case enter
        case backspace
        /// A lone Escape.
        case escape
        /// Ctrl-C or Ctrl-D.
        case interrupt
        /// An escape sequence or another control byte; nothing to do.
        case ignored
    }

    private var pending: [UInt8] = []

    /// The keys in `bytes` (one read); a character cut at the end waits for the next read.
    mutating func feed(_ bytes: [UInt8]) -> [Key] {
        let input = pending + bytes
        pending = []
        var keys: [Key] = []
        var index = 0
        while index < input.count {
            let byte = input[index]
            switch byte {
            case 27:
                if index + 1 == input.count {
                    keys.append(.escape)  // a read holding only Escape: the key itself
                    index += 1
                } else {
                    index = skipSequence(input, from: index)
                    keys.append(.ignored)
                }
            case 13, 10:
                keys.append(.enter)
                index += 1
            case 127, 8:
                keys.append(.backspace)
                index += 1
            case 3, 4:
                keys.append(.interrupt)
                index += 1
            case 0..<32:
                keys.append(.ignored)
                index += 1
            default:
                let length = Self.sequenceLength(byte)
                guard length > 0 else {
                    keys.append(.character("\u{FFFD}"))  // a stray continuation or invalid byte
                    index += 1
                    continue
                }
                guard index + length <= input.count else {
                    pending = Array(input[index...])
                    index = input.count
                    continue
                }
                let slice = input[index..<index + length]
                if let scalar = String(validating: slice, as: UTF8.self)?.unicodeScalars.first {
                    keys.append(.character(Character(scalar)))
                } else {
                    keys.append(.character("\u{FFFD}"))
                }
                index += length
            }
        }
        return keys
    }

    /// The index after the escape sequence starting at `start` (CSI, SS3, or Alt plus a key).
    private func skipSequence(_ input: [UInt8], from start: Int) -> Int {
        var index = start + 1
        guard index < input.count else { return index }
        let kind = input[index]
        index += 1
        switch kind {
        case UInt8(ascii: "["):
            while index < input.count, !(0x40...0x7E).contains(input[index]) { index += 1 }
            return min(input.count, index + 1)
        case UInt8(ascii: "O"):
            return min(input.count, index + 1)
        default:
            return index
        }
    }

    /// Bytes in the UTF-8 sequence a lead byte starts; 0 when it is not a lead byte.
    private static func sequenceLength(_ byte: UInt8) -> Int {
        switch byte {
        case 0x20..<0x80: return 1
        case 0xC2...0xDF: return 2
        case 0xE0...0xEF: return 3
        case 0xF0...0xF4: return 4
        default: return 0
        }
    }
}
