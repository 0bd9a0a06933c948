import Foundation

/// The words a message is found by, and the words a search asks for, the same way for every
/// language and both stores (SQLite FTS5 and PostgreSQL full-text search index the terms this
/// makes, as space-separated words; neither store's own word breaking is relied on).
///
/// - Case, width (full-width Latin, half-width katakana) and the accents of Latin, Greek and
///   Cyrillic letters are folded: "Café" is found by "cafe".
/// - Arabic loses its short vowels (harakat) and tatweel, its alef forms become ا, ى becomes ي
///   and ة becomes ه, as people type them either way; a word is indexed both as written and
///   without the article and its joined prepositions (ال، وال، بال، كال، فال، لل), so that
///   "كتاب" finds "الكتاب", and a search looks for the word without them.
/// - Chinese and Japanese, written without spaces, are indexed by every character and every
///   pair of neighbouring characters; a search of two or more characters looks for its pairs
///   (東京タワー is found by 東京 and by タワー), of one character for that character.
/// - Other words (runs of letters and digits) are whole words; a search matches each of its
///   words as the beginning of a word ("hel" finds "hello", "كتاب" finds "كتابه").
struct SearchTerms: Sendable, Equatable {
    /// The words to look for, each matched as a word's beginning when `prefix`.
    struct Term: Sendable, Equatable {
        var text: String
        var prefix: Bool
    }

    /// The most terms a search looks for: past that, the first ones.
    static let maxQueryTerms = 16

    /// The terms of `text` to index, space-separated (unique, in order of first appearance).
    static func index(_ text: String) -> String {
        var seen: Set<String> = []
        var terms: [String] = []
        func add(_ term: String) {
            if seen.insert(term).inserted { terms.append(term) }
        }
        for run in runs(fold(text)) {
            switch run {
            case .ideographic(let characters):
                for character in characters { add(String(character)) }
                for pair in pairs(characters) { add(pair) }
            case .word(let word):
                add(word)
                if let stripped = withoutArabicArticle(word) { add(stripped) }
            }
        }
        return terms.joined(separator: " ")
    }

    /// What a search for `query` looks for: every term must be found (at most `maxQueryTerms`).
    static func query(_ query: String) -> [Term] {
        var terms: [Term] = []
        for run in runs(fold(query)) {
            switch run {
            case .ideographic(let characters) where characters.count == 1:
                terms.append(Term(text: String(characters), prefix: false))
            case .ideographic(let characters):
                terms += pairs(characters).map { Term(text: $0, prefix: false) }
            case .word(let word):
                terms.append(Term(text: withoutArabicArticle(word) ?? word, prefix: true))
            }
        }
        var seen: Set<String> = []
        return Array(terms.filter { seen.insert($0.text).inserted }.prefix(maxQueryTerms))
    }

    // MARK: Folding

    private enum Run {
        /// Chinese characters and Japanese kana, written without spaces.
        case ideographic([Character])
        /// Letters and digits of any other script.
        case word(String)
    }

    /// Splits folded text into words and runs of ideographs; anything else separates them.
    private static func runs(_ text: String) -> [Run] {
        var runs: [Run] = []
        var word = ""
        var ideographs: [Character] = []
        func flush() {
            if !word.isEmpty { runs.append(.word(word)) }
            if !ideographs.isEmpty { runs.append(.ideographic(ideographs)) }
            word = ""
            ideographs = []
        }
        for character in text {
            if isIdeographic(character) {
                if !word.isEmpty { flush() }
                ideographs.append(character)
            } else if character.isLetter || character.isNumber {
                if !ideographs.isEmpty { flush() }
                word.append(character)
            } else {
                flush()
            }
        }
        flush()
        return runs
    }

    private static func pairs(_ characters: [Character]) -> [String] {
        characters.count < 2 ? [] : (0..<(characters.count - 1)).map { String(characters[$0]) + String(characters[$0 + 1]) }
    }

    /// Han ideographs, hiragana and katakana (the prolonged sound mark ー included).
    private static func isIdeographic(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value else { return false }
        switch scalar {
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FFFF: return true
        default: return false
        }
    }

    /// Lower case, one width, Latin/Greek/Cyrillic accents and Arabic vowel marks gone, Arabic
    /// letter forms made one.
    static func fold(_ text: String) -> String {
        // NFKC makes full-width Latin narrow and half-width katakana full.
        let wide = text.precomposedStringWithCompatibilityMapping
        var scalars = String.UnicodeScalarView()
        var base: UInt32 = 0
        for scalar in wide.lowercased().decomposedStringWithCanonicalMapping.unicodeScalars {
            let value = scalar.value
            // A combining accent on a Latin, Greek or Cyrillic letter (kana keep their marks).
            if scalar.properties.generalCategory == .nonspacingMark, base < 0x0530 { continue }
            switch value {
            case 0x064B...0x065F, 0x0670, 0x0640: continue  // harakat, dagger alef, tatweel
            case 0x0622, 0x0623, 0x0625, 0x0671: scalars.append("\u{0627}")  // alef forms: ا
            case 0x0649: scalars.append("\u{064A}")  // ى: ي
            case 0x0629: scalars.append("\u{0647}")  // ة: ه
            default: scalars.append(scalar)
            }
            if scalar.properties.generalCategory != .nonspacingMark { base = value }
        }
        return String(scalars).precomposedStringWithCanonicalMapping
    }

    /// An Arabic word without its article and joined preposition, when what is left is a word
    /// of two letters or more; nil for any other word.
    private static func withoutArabicArticle(_ word: String) -> String? {
        for prefix in ["وال", "بال", "كال", "فال", "لل", "ال"] where word.hasPrefix(prefix) {
            let rest = word.dropFirst(prefix.count)
            return rest.count >= 2 ? String(rest) : nil
        }
        return nil
    }
}
