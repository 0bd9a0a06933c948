/// Every user-visible string of the room screen, in each language.
public enum Strings {
    /// A string with its arguments.
    public enum Key: Sendable, Equatable {
        case seat(Int)
        case lockedSeat
        case you
        case members(Int)
        case wantsToSpeak(String)
        case reconnecting
        case networkPoor
        case kicked(String)
        case roomEnded
        case chatMuted
        case chatMutedForAll
        case tokenExpiring
        case left
        case invitedToSeat(String)
        case failed(String)
        case requestMode
        case freeMode
    }

    /// The text of `key` in `language`.
    public static func text(_ key: Key, _ language: Language) -> String {
        switch language {
        case .english: return english(key)
        case .simplifiedChinese: return chinese(key)
        case .arabic: return arabic(key)
        }
    }

    private static func english(_ key: Key) -> String {
        switch key {
        case .seat(let number): return "Seat \(number)"
        case .lockedSeat: return "Locked"
        case .you: return "You"
        case .members(let count): return count == 1 ? "1 member" : "\(count) members"
        case .wantsToSpeak(let name): return "\(name) wants to speak"
        case .reconnecting: return "Reconnecting…"
        case .networkPoor: return "Your network is poor"
        case .kicked(let by): return by.isEmpty ? "You were removed from the room" : "You were removed from the room by \(by)"
        case .roomEnded: return "This room has ended"
        case .chatMuted: return "You can't send messages right now"
        case .chatMutedForAll: return "Chat is muted for everyone"
        case .tokenExpiring: return "Your session is about to expire"
        case .left: return "You left the room"
        case .invitedToSeat(let name): return "\(name) invited you to speak"
        case .failed(let reason): return "Something went wrong: \(reason)"
        case .requestMode: return "Ask to speak"
        case .freeMode: return "Open seats"
        }
    }

    private static func chinese(_ key: Key) -> String {
        switch key {
        case .seat(let number): return "\(number)号麦"
        case .lockedSeat: return "已锁麦"
        case .you: return "我"
        case .members(let count): return "\(count)人在线"
        case .wantsToSpeak(let name): return "\(name)申请上麦"
        case .reconnecting: return "正在重新连接…"
        case .networkPoor: return "当前网络不佳"
        case .kicked(let by): return by.isEmpty ? "你已被移出房间" : "你已被\(by)移出房间"
        case .roomEnded: return "房间已关闭"
        case .chatMuted: return "你已被禁言"
        case .chatMutedForAll: return "全员禁言中"
        case .tokenExpiring: return "登录即将过期"
        case .left: return "你已离开房间"
        case .invitedToSeat(let name): return "\(name)邀请你上麦"
        case .failed(let reason): return "出错了：\(reason)"
        case .requestMode: return "申请上麦"
        case .freeMode: return "自由上麦"
        }
    }

    private static func arabic(_ key: Key) -> String {
        switch key {
        case .seat(let number): return "المقعد \(number)"
        case .lockedSeat: return "مقفل"
        case .you: return "أنت"
        case .members(let count): return "\(count) عضو"
        case .wantsToSpeak(let name): return "\(name) يطلب التحدث"
        case .reconnecting: return "جارٍ إعادة الاتصال…"
        case .networkPoor: return "شبكتك ضعيفة"
        case .kicked(let by): return by.isEmpty ? "تمت إزالتك من الغرفة" : "أزالك \(by) من الغرفة"
        case .roomEnded: return "انتهت هذه الغرفة"
        case .chatMuted: return "لا يمكنك إرسال الرسائل الآن"
        case .chatMutedForAll: return "الدردشة مكتومة للجميع"
        case .tokenExpiring: return "جلستك على وشك الانتهاء"
        case .left: return "غادرت الغرفة"
        case .invitedToSeat(let name): return "دعاك \(name) للتحدث"
        case .failed(let reason): return "حدث خطأ: \(reason)"
        case .requestMode: return "اطلب التحدث"
        case .freeMode: return "مقاعد مفتوحة"
        }
    }
}
