import Foundation
import MajlisProtocol
import Testing

@Suite struct DisplayNameTests {
    @Test func controlAndFormatCharactersAreRemoved() {
        #expect(DisplayName.clean("\u{1B}]0;pwned\u{07}Eve\u{1B}[2J") == "]0;pwnedEve[2J")
        #expect(DisplayName.clean("\u{202E}evE\u{200F}") == "evE")
        #expect(DisplayName.clean("  Huda \n\t bint   Ali  ") == "Huda bint Ali")
        #expect(DisplayName.clean("هدى") == "هدى")
        #expect(DisplayName.clean("👨‍👩‍👧") == "👨‍👩‍👧", "the zero-width joiner of an emoji family stays")
        #expect(DisplayName.clean("\u{0}\u{1}") == "")
        #expect(DisplayName.clean(String(repeating: "a", count: 100)).count == 64)
        #expect(DisplayName.comparisonKey("HUDA") == DisplayName.comparisonKey("huda"))
    }

    @Test func aFramesIdIsFoundWithoutDecoding() {
        #expect(RequestDecoder.peekId(Data(#"{"op":"ping","id": 42}"#.utf8)) == 42)
        #expect(RequestDecoder.peekId(Data(#"{"id":-7,"op":"x"}"#.utf8)) == -7)
        #expect(RequestDecoder.peekId(Data("xxxx".utf8)) == nil)
        #expect(RequestDecoder.peekId(Data(#"{"id":"a"}"#.utf8)) == nil)
    }
}
