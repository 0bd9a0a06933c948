import MajlisProtocol

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
        // Marks on seats and members.
        case host
        case admin
        case micOn
        case micOff
        case seatMuted
        // This user's request to speak.
        case requestPending
        case requestAccepted(seat: Int)
        case requestRejected
        case requestCancelled
        case requestExpired
        case askedInstead
        // Notices between chat messages.
        case memberJoined(String)
        case memberLeft(String)
        case memberRemoved(String)
        // Why something did not work, in plain words.
        case error(ErrorCode)
        case noAnswer
        case notConnected
        case connectionClosed(String)
        case unreadableAnswer
        // The terminal client's own lines.
        case keys
        /// The keys while requests to speak wait for this member (a host or admin).
        case keysRequests
        case keysInvite
        case acceptOrReject
        case pressToChat
        case sectionRequests
        case sectionChat
        case sectionMembers
        case pressToQuit
        case sound(String)
        case noSound
        /// What Opus does not carry of the equalizer set: the 16 kHz band (`top`), and with the
        /// speech profile the bands under 2 kHz (`low`).
        case equalizerThroughOpus(top: Bool, low: Bool)
        case voiceProcessing(Bool)
        case voiceEffect(String)
        /// A voice effect preset's name.
        case effectPreset(VoiceEffect.Preset)
        case music(playing: Bool)
        case noMusic
        case spatialSound(Bool)
    }

    /// The text of `key` in `language`.
    public static func text(_ key: Key, _ language: Language) -> String {
        switch language {
        case .english: return english(key)
        case .simplifiedChinese: return chinese(key)
        case .arabic: return arabic(key)
        case .japanese: return japanese(key)
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
        case .host: return "host"
        case .admin: return "admin"
        case .micOn: return "mic"
        case .micOff: return "off"
        case .seatMuted: return "MUTED"
        case .requestPending: return "You asked to speak: waiting for the host"
        case .requestAccepted(let seat): return "The host accepted: you are on seat \(seat)"
        case .requestRejected: return "The host declined your request to speak"
        case .requestCancelled: return "You withdrew your request to speak"
        case .requestExpired: return "Nobody answered your request to speak in time"
        case .askedInstead: return "In this room you ask first: your request to speak is sent"
        case .memberJoined(let name): return "\(name) joined"
        case .memberLeft(let name): return "\(name) left"
        case .memberRemoved(let name): return "\(name) was removed"
        case .error(let code): return englishError(code)
        case .noAnswer: return "The server did not answer; try again"
        case .notConnected: return "Not connected to the server"
        case .connectionClosed(let reason): return "The server closed the connection: \(reason)"
        case .unreadableAnswer: return "The server's answer could not be read"
        case .keys: return "q quit  t/1-9 seat  r ask  l leave  m mic  c chat  u people  e effect  p sound"
        case .keysRequests: return "q quit  t/1-9 seat  l leave  m mic  c chat  u people  a/x accept/reject"
        case .keysInvite: return "y accept the invitation · n decline"
        case .acceptOrReject: return "[a]ccept [x]reject"
        case .pressToChat: return "press c to chat"
        case .sectionRequests: return "requests"
        case .sectionChat: return "chat"
        case .sectionMembers: return "members"
        case .pressToQuit: return "press q to quit"
        case .sound(let device): return "Sound: \(device)  (p clean-up, e effect, k music, h seats around)"
        case .noSound: return "No sound server (PulseAudio or PipeWire): you hear nothing and nobody hears you; use --mic and --record"
        case .equalizerThroughOpus(let top, let low):
            let parts = (top ? ["16 kHz at about half its gain"] : []) + (low ? ["the bands under 2 kHz within 3 dB (--profile music: within 1)"] : [])
            return "Equalizer: through Opus the room hears " + parts.joined(separator: " and ")
        case .voiceProcessing(let on): return on ? "Echo cancellation and noise suppression on" : "Echo cancellation and noise suppression off"
        case .voiceEffect(let name): return "Voice effect: \(name)"
        case .effectPreset(let preset):
            switch preset {
            case .none: return "none"
            case .deeper: return "deeper"
            case .brighter: return "brighter"
            case .child: return "child"
            case .elder: return "elder"
            case .robot: return "robot"
            case .ktv: return "karaoke"
            case .studio: return "studio"
            case .hall: return "concert hall"
            }
        case .music(let playing): return playing ? "Music playing" : "Music paused"
        case .noMusic: return "No music: start with --music FILE"
        case .spatialSound(let on): return on ? "Seats around you (for headphones)" : "Seats in the middle"
        }
    }

    private static func englishError(_ code: ErrorCode) -> String {
        switch code {
        case .unsupported: return "This server does not support that"
        case .badRequest: return "The server did not understand the request"
        case .unauthorized: return "The server refused your sign-in"
        case .tokenExpired: return "Your sign-in has expired; get a new token"
        case .forbidden: return "You are not allowed to do that"
        case .roomNotFound: return "This room does not exist"
        case .conversationNotFound: return "This conversation does not exist, or you are not in it"
        case .messageNotFound: return "This message does not exist"
        case .roomExists: return "A room with this name already exists"
        case .roomFull: return "The room is full"
        case .notInRoom: return "You are not in this room"
        case .banned: return "You are banned from this room"
        case .seatOutOfRange: return "There is no such seat"
        case .seatOccupied: return "That seat is taken"
        case .seatLocked: return "That seat is locked"
        case .alreadySeated: return "You are already on a seat"
        case .notSeated: return "You are not on a seat"
        case .noFreeSeat: return "No seat is free"
        case .approvalRequired: return "In this room you ask to speak first"
        case .alreadyRequested: return "You already asked to speak"
        case .requestNotFound: return "That request is no longer waiting"
        case .inviteNotFound: return "That invitation is no longer open"
        case .chatMuted: return "Your chat is muted"
        case .rateLimited: return "Too fast; wait a moment"
        case .tooLarge: return "That is too long"
        case .conflict: return "Someone else changed it first"
        case .internal: return "The server had a problem; try again"
        case .outcomeUnknown: return "Not sure it was sent; send it again"
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
        case .host: return "房主"
        case .admin: return "管理员"
        case .micOn: return "开麦"
        case .micOff: return "闭麦"
        case .seatMuted: return "被禁麦"
        case .requestPending: return "已申请上麦，等待房主同意"
        case .requestAccepted(let seat): return "房主已同意：你在\(seat)号麦"
        case .requestRejected: return "房主拒绝了你的上麦申请"
        case .requestCancelled: return "你已取消上麦申请"
        case .requestExpired: return "上麦申请已超时"
        case .askedInstead: return "本房间需申请上麦：已为你发送申请"
        case .memberJoined(let name): return "\(name)进入了房间"
        case .memberLeft(let name): return "\(name)离开了房间"
        case .memberRemoved(let name): return "\(name)被移出房间"
        case .error(let code): return chineseError(code)
        case .noAnswer: return "服务器没有响应，请重试"
        case .notConnected: return "未连接到服务器"
        case .connectionClosed(let reason): return "服务器断开了连接：\(reason)"
        case .unreadableAnswer: return "无法读取服务器的响应"
        case .keys: return "q 退出  t/1-9 上麦  r 申请  l 下麦  m 麦克风  c 聊天  u 成员  e 音效  p 声音处理"
        case .keysRequests: return "q 退出  t/1-9 上麦  l 下麦  m 麦克风  c 聊天  u 成员  a/x 同意/拒绝"
        case .keysInvite: return "y 接受邀请 · n 拒绝"
        case .acceptOrReject: return "[a]同意 [x]拒绝"
        case .pressToChat: return "按 c 发消息"
        case .sectionRequests: return "上麦申请"
        case .sectionChat: return "聊天"
        case .sectionMembers: return "成员"
        case .pressToQuit: return "按 q 退出"
        case .sound(let device): return "声音：\(device)（p 降噪，e 音效，k 音乐，h 环绕）"
        case .noSound: return "没有声音服务（PulseAudio 或 PipeWire）：听不到也说不出；可用 --mic 和 --record"
        case .equalizerThroughOpus(let top, let low):
            let parts = (top ? ["16 kHz 约为所设增益的一半"] : []) + (low ? ["2 kHz 以下各段误差在 3 dB 内（--profile music：1 dB 内）"] : [])
            return "均衡器：经 Opus 编码后房间听到的" + parts.joined(separator: "，")
        case .voiceProcessing(let on): return on ? "回声消除与降噪：开" : "回声消除与降噪：关"
        case .voiceEffect(let name): return "音效：\(name)"
        case .effectPreset(let preset):
            switch preset {
            case .none: return "无"
            case .deeper: return "低沉"
            case .brighter: return "明亮"
            case .child: return "童声"
            case .elder: return "老人"
            case .robot: return "机器人"
            case .ktv: return "KTV"
            case .studio: return "录音棚"
            case .hall: return "音乐厅"
            }
        case .music(let playing): return playing ? "音乐播放中" : "音乐已暂停"
        case .noMusic: return "没有音乐：启动时加 --music 文件"
        case .spatialSound(let on): return on ? "麦位环绕在你周围（耳机）" : "麦位在正中"
        }
    }

    private static func chineseError(_ code: ErrorCode) -> String {
        switch code {
        case .unsupported: return "服务器不支持此操作"
        case .badRequest: return "服务器无法理解该请求"
        case .unauthorized: return "服务器拒绝了你的登录"
        case .tokenExpired: return "登录已过期，请获取新的令牌"
        case .forbidden: return "你没有权限这样做"
        case .roomNotFound: return "房间不存在"
        case .conversationNotFound: return "会话不存在，或你不在其中"
        case .messageNotFound: return "消息不存在"
        case .roomExists: return "同名房间已存在"
        case .roomFull: return "房间已满"
        case .notInRoom: return "你不在这个房间里"
        case .banned: return "你已被禁止进入该房间"
        case .seatOutOfRange: return "没有这个麦位"
        case .seatOccupied: return "该麦位已有人"
        case .seatLocked: return "该麦位已锁定"
        case .alreadySeated: return "你已经在麦上"
        case .notSeated: return "你不在麦上"
        case .noFreeSeat: return "没有空麦位"
        case .approvalRequired: return "本房间需要先申请上麦"
        case .alreadyRequested: return "你已经申请过了"
        case .requestNotFound: return "该申请已不存在"
        case .inviteNotFound: return "该邀请已失效"
        case .chatMuted: return "你在聊天中被禁言"
        case .rateLimited: return "操作太快，请稍等"
        case .tooLarge: return "内容太长"
        case .conflict: return "已被他人先修改"
        case .internal: return "服务器出现问题，请重试"
        case .outcomeUnknown: return "不确定是否已发送，请再发送一次"
        }
    }

    /// Arabic's six plural forms, as Unicode's CLDR chooses them: 0, 1, 2, then by the last two
    /// digits 3-10 (few) and 11-99 (many), and the rest (100, 101, 102, ...).
    static func arabicCount(_ count: Int, zero: String, one: String, two: String, few: String, many: String, other: String) -> String {
        switch count {
        case 0: return zero
        case 1: return one
        case 2: return two
        default:
            switch count % 100 {
            case 3...10: return few
            case 11...99: return many
            default: return other
            }
        }
    }

    private static func arabic(_ key: Key) -> String {
        switch key {
        case .seat(let number): return "المقعد \(number)"
        case .lockedSeat: return "مقفل"
        case .you: return "أنت"
        case .members(let count):
            return arabicCount(count, zero: "لا أعضاء", one: "عضو واحد", two: "عضوان", few: "\(count) أعضاء", many: "\(count) عضوًا", other: "\(count) عضو")
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
        case .host: return "المضيف"
        case .admin: return "مشرف"
        case .micOn: return "مايك"
        case .micOff: return "مغلق"
        case .seatMuted: return "مكتوم"
        case .requestPending: return "طلبت التحدث: بانتظار المضيف"
        case .requestAccepted(let seat): return "وافق المضيف: أنت على المقعد \(seat)"
        case .requestRejected: return "رفض المضيف طلبك للتحدث"
        case .requestCancelled: return "سحبت طلبك للتحدث"
        case .requestExpired: return "لم يرد أحد على طلبك للتحدث في الوقت"
        case .askedInstead: return "في هذه الغرفة تطلب أولاً: أُرسل طلبك للتحدث"
        case .memberJoined(let name): return "انضم \(name)"
        case .memberLeft(let name): return "غادر \(name)"
        case .memberRemoved(let name): return "أُزيل \(name)"
        case .error(let code): return arabicError(code)
        case .noAnswer: return "لم يرد الخادم؛ حاول مرة أخرى"
        case .notConnected: return "غير متصل بالخادم"
        case .connectionClosed(let reason): return "أغلق الخادم الاتصال: \(reason)"
        case .unreadableAnswer: return "تعذرت قراءة رد الخادم"
        case .keys: return "q خروج  t/1-9 مقعد  r طلب  l نزول  m ميكروفون  c دردشة  u الحضور  e مؤثر  p صفاء"
        case .keysRequests: return "q خروج  t/1-9 مقعد  l نزول  m ميكروفون  c دردشة  u الحضور  a/x قبول/رفض"
        case .keysInvite: return "y قبول الدعوة · n رفض"
        case .acceptOrReject: return "[a] قبول [x] رفض"
        case .pressToChat: return "اضغط c للدردشة"
        case .sectionRequests: return "الطلبات"
        case .sectionChat: return "الدردشة"
        case .sectionMembers: return "الأعضاء"
        case .pressToQuit: return "اضغط q للخروج"
        case .sound(let device): return "الصوت: \(device)  (p التنقية، e المؤثر، k الموسيقى، h المقاعد حولك)"
        case .noSound: return "لا يوجد خادم صوت (PulseAudio أو PipeWire): لن تسمع ولن يسمعك أحد؛ استخدم ‎--mic و ‎--record"
        case .equalizerThroughOpus(let top, let low):
            let parts = (top ? ["نطاق 16 كيلوهرتز بنحو نصف كسبه"] : []) + (low ? ["النطاقات دون 2 كيلوهرتز بفارق 3 ديسيبل (‎--profile music: بفارق 1)"] : [])
            return "المعادل: عبر Opus تسمع الغرفة " + parts.joined(separator: " و")
        case .voiceProcessing(let on): return on ? "إلغاء الصدى وكتم الضوضاء: مفعّل" : "إلغاء الصدى وكتم الضوضاء: متوقف"
        case .voiceEffect(let name): return "مؤثر الصوت: \(name)"
        case .effectPreset(let preset):
            switch preset {
            case .none: return "بلا"
            case .deeper: return "أعمق"
            case .brighter: return "أنصع"
            case .child: return "طفل"
            case .elder: return "مسنّ"
            case .robot: return "آلي"
            case .ktv: return "كاريوكي"
            case .studio: return "استوديو"
            case .hall: return "قاعة حفلات"
            }
        case .music(let playing): return playing ? "الموسيقى تعمل" : "الموسيقى متوقفة مؤقتًا"
        case .noMusic: return "لا موسيقى: ابدأ بـ ‎--music ملف"
        case .spatialSound(let on): return on ? "المقاعد من حولك (لسماعات الرأس)" : "المقاعد في الوسط"
        }
    }

    private static func arabicError(_ code: ErrorCode) -> String {
        switch code {
        case .unsupported: return "هذا الخادم لا يدعم ذلك"
        case .badRequest: return "لم يفهم الخادم الطلب"
        case .unauthorized: return "رفض الخادم تسجيل دخولك"
        case .tokenExpired: return "انتهت صلاحية تسجيل دخولك؛ احصل على رمز جديد"
        case .forbidden: return "غير مسموح لك بذلك"
        case .roomNotFound: return "هذه الغرفة غير موجودة"
        case .conversationNotFound: return "هذه المحادثة غير موجودة، أو لست فيها"
        case .messageNotFound: return "هذه الرسالة غير موجودة"
        case .roomExists: return "توجد غرفة بهذا الاسم"
        case .roomFull: return "الغرفة ممتلئة"
        case .notInRoom: return "لست في هذه الغرفة"
        case .banned: return "أنت محظور من هذه الغرفة"
        case .seatOutOfRange: return "لا يوجد مقعد كهذا"
        case .seatOccupied: return "هذا المقعد مشغول"
        case .seatLocked: return "هذا المقعد مقفل"
        case .alreadySeated: return "أنت على مقعد بالفعل"
        case .notSeated: return "لست على مقعد"
        case .noFreeSeat: return "لا يوجد مقعد شاغر"
        case .approvalRequired: return "في هذه الغرفة تطلب التحدث أولاً"
        case .alreadyRequested: return "طلبت التحدث بالفعل"
        case .requestNotFound: return "هذا الطلب لم يعد قائماً"
        case .inviteNotFound: return "هذه الدعوة لم تعد قائمة"
        case .chatMuted: return "دردشتك مكتومة"
        case .rateLimited: return "بسرعة كبيرة؛ انتظر لحظة"
        case .tooLarge: return "النص طويل جداً"
        case .conflict: return "غيّره شخص آخر أولاً"
        case .internal: return "حدثت مشكلة في الخادم؛ حاول مرة أخرى"
        case .outcomeUnknown: return "لسنا متأكدين من الإرسال؛ أرسلها مرة أخرى"
        }
    }

    private static func japanese(_ key: Key) -> String {
        switch key {
        case .seat(let number): return "\(number)番席"
        case .lockedSeat: return "ロック中"
        case .you: return "あなた"
        case .members(let count): return "\(count)人"
        case .wantsToSpeak(let name): return "\(name)さんが発言を申請しています"
        case .reconnecting: return "再接続中…"
        case .networkPoor: return "ネットワークが弱いです"
        case .kicked(let by): return by.isEmpty ? "ルームから退出させられました" : "\(by)さんにルームから退出させられました"
        case .roomEnded: return "このルームは終了しました"
        case .chatMuted: return "今はメッセージを送れません"
        case .chatMutedForAll: return "全員のチャットがオフになっています"
        case .tokenExpiring: return "セッションの期限がまもなく切れます"
        case .left: return "ルームを退出しました"
        case .invitedToSeat(let name): return "\(name)さんが発言に招待しています"
        case .failed(let reason): return "問題が起きました：\(reason)"
        case .requestMode: return "発言は申請制"
        case .freeMode: return "自由に着席"
        case .host: return "ホスト"
        case .admin: return "管理者"
        case .micOn: return "マイク"
        case .micOff: return "オフ"
        case .seatMuted: return "ミュート"
        case .requestPending: return "発言を申請しました：ホストの承認待ち"
        case .requestAccepted(let seat): return "ホストが承認しました：\(seat)番席です"
        case .requestRejected: return "ホストが発言の申請を却下しました"
        case .requestCancelled: return "発言の申請を取り消しました"
        case .requestExpired: return "発言の申請に時間内の応答がありませんでした"
        case .askedInstead: return "このルームは申請制です：発言の申請を送りました"
        case .memberJoined(let name): return "\(name)さんが参加しました"
        case .memberLeft(let name): return "\(name)さんが退出しました"
        case .memberRemoved(let name): return "\(name)さんが退出させられました"
        case .error(let code): return japaneseError(code)
        case .noAnswer: return "サーバーが応答しません。もう一度お試しください"
        case .notConnected: return "サーバーに接続されていません"
        case .connectionClosed(let reason): return "サーバーが接続を閉じました：\(reason)"
        case .unreadableAnswer: return "サーバーの応答を読めませんでした"
        case .keys: return "q 終了  t/1-9 着席  r 申請  l 離席  m マイク  c チャット  u 一覧  e 効果  p 処理"
        case .keysRequests: return "q 終了  t/1-9 着席  l 離席  m マイク  c チャット  u 一覧  a/x 承認/却下"
        case .keysInvite: return "y 招待を受ける · n 断る"
        case .acceptOrReject: return "[a]承認 [x]却下"
        case .pressToChat: return "c でチャット"
        case .sectionRequests: return "申請"
        case .sectionChat: return "チャット"
        case .sectionMembers: return "メンバー"
        case .pressToQuit: return "q で終了"
        case .sound(let device): return "サウンド：\(device)（p 処理、e 効果、k 音楽、h 席の配置）"
        case .noSound: return "サウンドサーバーがありません（PulseAudio か PipeWire）：音は聞こえず、声も届きません。--mic と --record を使ってください"
        case .equalizerThroughOpus(let top, let low):
            let parts = (top ? ["16 kHz は設定の約半分"] : []) + (low ? ["2 kHz 未満の帯域は 3 dB 以内（--profile music なら 1 dB 以内）"] : [])
            return "イコライザー：Opus を通すと部屋に届くのは " + parts.joined(separator: "、")
        case .voiceProcessing(let on): return on ? "エコー除去とノイズ抑制：オン" : "エコー除去とノイズ抑制：オフ"
        case .voiceEffect(let name): return "ボイスエフェクト：\(name)"
        case .effectPreset(let preset):
            switch preset {
            case .none: return "なし"
            case .deeper: return "低い声"
            case .brighter: return "明るい声"
            case .child: return "子ども"
            case .elder: return "お年寄り"
            case .robot: return "ロボット"
            case .ktv: return "カラオケ"
            case .studio: return "スタジオ"
            case .hall: return "コンサートホール"
            }
        case .music(let playing): return playing ? "音楽を再生中" : "音楽を一時停止中"
        case .noMusic: return "音楽がありません：--music FILE で始めてください"
        case .spatialSound(let on): return on ? "席をあなたの周りに配置（ヘッドホン向け）" : "席は中央"
        }
    }

    private static func japaneseError(_ code: ErrorCode) -> String {
        switch code {
        case .unsupported: return "このサーバーはその操作に対応していません"
        case .badRequest: return "サーバーが要求を理解できませんでした"
        case .unauthorized: return "サーバーがサインインを拒否しました"
        case .tokenExpired: return "サインインの期限が切れました。新しいトークンを取得してください"
        case .forbidden: return "その操作は許可されていません"
        case .roomNotFound: return "このルームはありません"
        case .conversationNotFound: return "この会話はないか、あなたは参加していません"
        case .messageNotFound: return "このメッセージはありません"
        case .roomExists: return "この名前のルームはすでにあります"
        case .roomFull: return "ルームは満員です"
        case .notInRoom: return "このルームにいません"
        case .banned: return "このルームへの入室は禁止されています"
        case .seatOutOfRange: return "その席はありません"
        case .seatOccupied: return "その席は埋まっています"
        case .seatLocked: return "その席はロックされています"
        case .alreadySeated: return "すでに席に着いています"
        case .notSeated: return "席に着いていません"
        case .noFreeSeat: return "空いている席がありません"
        case .approvalRequired: return "このルームではまず発言を申請します"
        case .alreadyRequested: return "すでに発言を申請しています"
        case .requestNotFound: return "その申請はもう待機していません"
        case .inviteNotFound: return "その招待はもう有効ではありません"
        case .chatMuted: return "あなたのチャットはミュートされています"
        case .rateLimited: return "操作が速すぎます。少し待ってください"
        case .tooLarge: return "長すぎます"
        case .conflict: return "先に誰かが変更しました"
        case .internal: return "サーバーで問題が起きました。もう一度お試しください"
        case .outcomeUnknown: return "送信できたか不明です。もう一度送ってください"
        }
    }
}
