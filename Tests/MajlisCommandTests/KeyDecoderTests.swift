import Testing

@testable import majlis

@Suite struct KeyDecoderTests {
    func characters(_ keys: [KeyDecoder.Key]) -> String {
        String(keys.compactMap { if case .character(let character) = $0 { return character } else { return nil } })
    }

    @Test func utf8TextArrivesWholeWhateverTheLanguage() {
        var decoder = KeyDecoder()
        for text in ["السلام عليكم", "你好，世界", "👋🏽 salam", "مُحَمَّد"] {
            #expect(characters(decoder.feed(Array(text.utf8))) == text)
        }
    }

    @Test func aCharacterSplitAcrossReadsWaitsForItsLastByte() {
        var decoder = KeyDecoder()
        let bytes = Array("سلام😀".utf8)
        var keys: [KeyDecoder.Key] = []
        for byte in bytes { keys += decoder.feed([byte]) }  // one byte per read, the worst case
        #expect(characters(keys) == "سلام😀")
        #expect(keys.count == 5)
    }

    @Test func controlKeysAndEscapeSequences() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([13]) == [.enter])
        #expect(decoder.feed([127]) == [.backspace])
        #expect(decoder.feed([3]) == [.interrupt])
        #expect(decoder.feed([27]) == [.escape])
        // Arrow keys and F5 are skipped, the letters around them are not.
        #expect(decoder.feed(Array("a\u{1B}[Ab\u{1B}OPc\u{1B}[15~d".utf8)) == [.character("a"), .ignored, .character("b"), .ignored, .character("c"), .ignored, .character("d")])
        // A stray continuation byte becomes one replacement character, and decoding goes on.
        #expect(decoder.feed([0x80, 0x61]) == [.character("\u{FFFD}"), .character("a")])
    }
}
