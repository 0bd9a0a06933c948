@testable import MajlisServer
import Testing

/// The words messages are found by, from a table: folded the same way for what is indexed and
/// what is asked, in the scripts the app's users write.
@Suite struct SearchTermsTests {
    @Test(arguments: [
        // Case, accents, width.
        ("Café au LAIT", "cafe au lait"),
        ("ＡＢＣ１２３", "abc123"),
        ("Ёлка", "елка"),
        // Arabic: harakat, tatweel and hamza forms go; the article is indexed off as well.
        ("الكِتَابُ", "الكتاب كتاب"),
        ("مـــرحبا", "مرحبا"),
        ("أحمد إلى آخر", "احمد الي اخر"),
        ("مدرسة", "مدرسه"),
        ("وال", "وال"),
        // Chinese and Japanese: every character and every neighbouring pair.
        ("東京タワー", "東 京 タ ワ ー 東京 京タ タワ ワー"),
        ("你好", "你 好 你好"),
        ("ｶﾀｶﾅ", "カ タ ナ カタ タカ カナ"),
        ("が", "が"),
        // Scripts side by side, punctuation between.
        ("hi!東京, hi", "hi 東 京 東京"),
        ("", ""),
    ])
    func indexedTerms(_ text: String, _ terms: String) {
        #expect(SearchTerms.index(text) == terms)
    }

    @Test(arguments: [
        ("Cafe", ["cafe*"]),
        ("الكتاب", ["كتاب*"]),
        ("مدرسة", ["مدرسه*"]),
        ("東京", ["東京"]),
        ("タワー", ["タワ", "ワー"]),
        ("京", ["京"]),
        ("hel 東京 hel", ["hel*", "東京"]),
        ("?!", []),
    ])
    func queryTerms(_ query: String, _ terms: [String]) {
        #expect(SearchTerms.query(query).map { $0.text + ($0.prefix ? "*" : "") } == terms)
    }

    @Test func aQueryLooksForAtMostSixteenTerms() {
        let query = (1...40).map { "w\($0)" }.joined(separator: " ")
        #expect(SearchTerms.query(query).count == SearchTerms.maxQueryTerms)
    }
}
