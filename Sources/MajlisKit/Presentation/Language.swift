/// The languages the presenter speaks.
public enum Language: String, Sendable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"
    case arabic = "ar"
    case japanese = "ja"

    /// Whether text and layout run right to left.
    public var isRightToLeft: Bool { self == .arabic }

    /// The best match for a locale identifier such as "ar_SA" or "zh-Hans-CN"; English otherwise.
    public init(localeIdentifier: String) {
        let lower = localeIdentifier.lowercased()
        if lower.hasPrefix("ar") {
            self = .arabic
        } else if lower.hasPrefix("zh") {
            self = .simplifiedChinese
        } else if lower.hasPrefix("ja") {
            self = .japanese
        } else {
            self = .english
        }
    }
}
