// The page's words in English, Simplified Chinese and Arabic. `{name}` marks a value.

export const languages = { en: 'English', zh: '中文', ar: 'العربية' };

const strings = {
  en: {
    'console.title': 'Majlis console', 'console.token': 'Admin token (grants admin for every room)', 'console.signIn': 'Sign in',
    'console.development': 'Use the development key', 'console.noDevelopment': 'This server is not in development mode: paste an admin token',
    'console.signOut': 'Sign out', 'console.rooms': 'Rooms', 'console.roomCount': '{n} open', 'console.noRooms': 'No rooms yet',
    'console.roomTitle': 'Title', 'console.mode': 'Seats', 'console.open': 'Open', 'console.muteAll': 'Mute everyone',
    'console.unmuteAll': 'Unmute everyone', 'console.muted': 'Muted', 'console.nobody': 'Nobody is here', 'console.remove': 'Remove',
    'console.ban': 'Ban for a day', 'console.systemMessage': 'A message from the system to everyone here', 'console.webhooks': 'Webhooks',
    'console.queue': '{n} waiting', 'console.noWebhooks': 'No webhook events (none configured, or nothing happened yet)',
    'console.event': 'Event', 'console.state': 'State', 'console.attempts': 'Tries', 'console.when': 'When', 'console.replay': 'Send again',
    'console.failed': 'Given up', 'console.pending': 'Waiting', 'console.delivered': 'Delivered', 'console.said': 'Message sent',
    'console.confirmEnd': 'End room {room} for everyone in it?', 'console.ended': 'Room {room} ended', 'console.removed': '{name} removed',
    'console.banned': '{name} removed and banned for a day', 'console.replayed': 'It will be sent again',
    title: 'Majlis', join: 'Join', yourName: 'Your name', roomId: 'Room', token: 'Token (from your app)', createAs: 'If it does not exist, create it',
    free: 'Anyone may take a seat', request: 'Ask the host to speak', seats: 'Seats', members: 'Members', chat: 'Chat', send: 'Send',
    typeMessage: 'Write a message', leaveRoom: 'Leave', endRoom: 'End room', micOn: 'Mic on', micOff: 'Mic off', takeSeat: 'Take a seat',
    leaveSeat: 'Leave seat', askToSpeak: 'Ask to speak', cancelRequest: 'Cancel request', requestPending: 'Waiting for the host',
    requests: 'Asking to speak', accept: 'Accept', reject: 'Reject', lock: 'Lock', unlock: 'Unlock', mute: 'Mute', unmute: 'Unmute',
    kickFromSeat: 'Off the seat', kick: 'Remove and ban', makeAdmin: 'Make admin', removeAdmin: 'Remove admin', transfer: 'Make owner',
    invite: 'Invite to a seat', owner: 'Host', admin: 'Admin', you: 'you', empty: 'Empty', locked: 'Locked', seat: 'Seat {n}',
    reconnecting: 'Reconnecting…', poorNetwork: 'Your network is poor: voice may break up', mediaFailed: 'Voice could not connect',
    noMic: 'No microphone: you can listen but not speak', joined: '{name} joined', left: '{name} left', accepted: 'You may speak now',
    rejected: 'The host declined your request', invited: '{name} invites you to a seat', yes: 'Yes', no: 'No', kicked: 'You were removed from the room',
    ended: 'The room has ended', closed: 'Disconnected: {reason}', today: 'Today', yesterday: 'Yesterday', language: 'Language',
    startAudio: 'Tap to hear the room', chatMuted: 'Chat is off for you', error: 'Could not do that: {message}', memberCount: '{n} here',
    'error.approval_required': 'This room asks the host first: ask to speak', 'error.seat_occupied': 'That seat is taken',
    'error.seat_locked': 'That seat is locked', 'error.no_free_seat': 'No free seat', 'error.chat_muted': 'Chat is off for you',
    'error.rate_limited': 'Too fast: wait a moment', 'error.forbidden': 'Only the host may do that', 'error.banned': 'You are banned from this room',
    'error.room_not_found': 'No such room', 'error.unauthorized': 'The sign-in was refused', 'error.token_expired': 'The sign-in has expired',
  },
  zh: {
    'console.title': 'Majlis 控制台', 'console.token': '管理令牌（所有房间的管理权限）', 'console.signIn': '登录',
    'console.development': '使用开发密钥', 'console.noDevelopment': '此服务器不在开发模式：请粘贴管理令牌',
    'console.signOut': '退出', 'console.rooms': '房间', 'console.roomCount': '共 {n} 个', 'console.noRooms': '还没有房间',
    'console.roomTitle': '标题', 'console.mode': '麦位', 'console.open': '打开', 'console.muteAll': '全员静音',
    'console.unmuteAll': '解除全员静音', 'console.muted': '已静音', 'console.nobody': '房间里没有人', 'console.remove': '移出',
    'console.ban': '封禁一天', 'console.systemMessage': '以系统身份发给房间里所有人的消息', 'console.webhooks': 'Webhook',
    'console.queue': '{n} 条待发送', 'console.noWebhooks': '没有 webhook 事件（未配置，或还没有发生）',
    'console.event': '事件', 'console.state': '状态', 'console.attempts': '尝试', 'console.when': '时间', 'console.replay': '重新发送',
    'console.failed': '已放弃', 'console.pending': '等待中', 'console.delivered': '已送达', 'console.said': '消息已发送',
    'console.confirmEnd': '为所有人结束房间 {room}？', 'console.ended': '房间 {room} 已结束', 'console.removed': '已移出 {name}',
    'console.banned': '已移出 {name} 并封禁一天', 'console.replayed': '将重新发送',
    title: 'Majlis', join: '加入', yourName: '你的名字', roomId: '房间', token: '令牌（来自你的应用）', createAs: '若不存在则创建',
    free: '任何人都可上麦', request: '上麦需房主同意', seats: '麦位', members: '成员', chat: '聊天', send: '发送',
    typeMessage: '输入消息', leaveRoom: '离开', endRoom: '结束房间', micOn: '麦克风开', micOff: '麦克风关', takeSeat: '上麦',
    leaveSeat: '下麦', askToSpeak: '申请上麦', cancelRequest: '取消申请', requestPending: '等待房主同意',
    requests: '上麦申请', accept: '同意', reject: '拒绝', lock: '锁麦', unlock: '解锁', mute: '禁麦', unmute: '解除禁麦',
    kickFromSeat: '抱下麦', kick: '踢出并封禁', makeAdmin: '设为管理员', removeAdmin: '取消管理员', transfer: '转让房主',
    invite: '邀请上麦', owner: '房主', admin: '管理员', you: '你', empty: '空位', locked: '已锁', seat: '{n} 号麦',
    reconnecting: '正在重新连接…', poorNetwork: '网络较差：声音可能断续', mediaFailed: '语音连接失败',
    noMic: '没有麦克风：只能收听', joined: '{name} 进入了房间', left: '{name} 离开了房间', accepted: '你可以发言了',
    rejected: '房主拒绝了你的申请', invited: '{name} 邀请你上麦', yes: '好', no: '不', kicked: '你已被移出房间',
    ended: '房间已结束', closed: '连接已断开：{reason}', today: '今天', yesterday: '昨天', language: '语言',
    startAudio: '点击收听', chatMuted: '你已被禁言', error: '操作失败：{message}', memberCount: '{n} 人',
    'error.approval_required': '本房间需申请上麦', 'error.seat_occupied': '该麦位已有人', 'error.seat_locked': '该麦位已锁',
    'error.no_free_seat': '没有空麦位', 'error.chat_muted': '你已被禁言', 'error.rate_limited': '操作太快，请稍候',
    'error.forbidden': '只有房主可以这样做', 'error.banned': '你已被禁止进入本房间', 'error.room_not_found': '房间不存在',
    'error.unauthorized': '登录被拒绝', 'error.token_expired': '登录已过期',
  },
  ar: {
    'console.title': 'لوحة تشغيل مجلس', 'console.token': 'رمز المشرف (صلاحية الإشراف على كل الغرف)', 'console.signIn': 'دخول',
    'console.development': 'استخدم مفتاح التطوير', 'console.noDevelopment': 'هذا الخادم ليس في وضع التطوير: الصق رمز مشرف',
    'console.signOut': 'خروج', 'console.rooms': 'الغرف', 'console.roomCount': 'العدد: {n}', 'console.noRooms': 'لا توجد غرف بعد',
    'console.roomTitle': 'العنوان', 'console.mode': 'المقاعد', 'console.open': 'افتح', 'console.muteAll': 'اكتم الجميع',
    'console.unmuteAll': 'ارفع الكتم عن الجميع', 'console.muted': 'مكتوم', 'console.nobody': 'لا أحد هنا', 'console.remove': 'أخرِج',
    'console.ban': 'احظر ليوم', 'console.systemMessage': 'رسالة من النظام إلى كل من هنا', 'console.webhooks': 'الإشعارات (Webhooks)',
    'console.queue': '{n} في الانتظار', 'console.noWebhooks': 'لا أحداث إشعارات (لم تُضبط، أو لم يحدث شيء بعد)',
    'console.event': 'الحدث', 'console.state': 'الحالة', 'console.attempts': 'المحاولات', 'console.when': 'الوقت', 'console.replay': 'أرسل ثانية',
    'console.failed': 'تُرك', 'console.pending': 'ينتظر', 'console.delivered': 'وصل', 'console.said': 'أُرسلت الرسالة',
    'console.confirmEnd': 'إنهاء الغرفة {room} للجميع؟', 'console.ended': 'انتهت الغرفة {room}', 'console.removed': 'أُخرج {name}',
    'console.banned': 'أُخرج {name} وحُظر ليوم', 'console.replayed': 'سيُرسل ثانية',
    title: 'مجلس', join: 'ادخل', yourName: 'اسمك', roomId: 'الغرفة', token: 'رمز الدخول (من تطبيقك)', createAs: 'أنشئها إن لم تكن موجودة',
    free: 'يجلس من يشاء', request: 'الكلام بإذن المضيف', seats: 'المقاعد', members: 'الحاضرون', chat: 'الدردشة', send: 'أرسل',
    typeMessage: 'اكتب رسالة', leaveRoom: 'اخرج', endRoom: 'أنهِ الغرفة', micOn: 'الميكروفون يعمل', micOff: 'الميكروفون مغلق', takeSeat: 'اجلس',
    leaveSeat: 'قم عن المقعد', askToSpeak: 'اطلب الكلام', cancelRequest: 'ألغِ الطلب', requestPending: 'بانتظار المضيف',
    requests: 'طلبات الكلام', accept: 'اقبل', reject: 'ارفض', lock: 'أقفل', unlock: 'افتح', mute: 'اكتم', unmute: 'ألغِ الكتم',
    kickFromSeat: 'أنزله عن المقعد', kick: 'أخرجه واحظره', makeAdmin: 'اجعله مشرفًا', removeAdmin: 'أزل الإشراف', transfer: 'انقل الاستضافة',
    invite: 'ادعه إلى مقعد', owner: 'المضيف', admin: 'مشرف', you: 'أنت', empty: 'فارغ', locked: 'مقفل', seat: 'المقعد {n}',
    reconnecting: 'جارٍ إعادة الاتصال…', poorNetwork: 'شبكتك ضعيفة: قد يتقطع الصوت', mediaFailed: 'تعذر اتصال الصوت',
    noMic: 'لا يوجد ميكروفون: يمكنك الاستماع فقط', joined: 'دخل {name}', left: 'خرج {name}', accepted: 'يمكنك الكلام الآن',
    rejected: 'رفض المضيف طلبك', invited: '{name} يدعوك إلى مقعد', yes: 'نعم', no: 'لا', kicked: 'أُخرجت من الغرفة',
    ended: 'انتهت الغرفة', closed: 'انقطع الاتصال: {reason}', today: 'اليوم', yesterday: 'أمس', language: 'اللغة',
    startAudio: 'انقر لتسمع الغرفة', chatMuted: 'الدردشة موقوفة عنك', error: 'تعذر ذلك: {message}', memberCount: '{n} حاضر',
    'error.approval_required': 'هذه الغرفة تتطلب إذن المضيف: اطلب الكلام', 'error.seat_occupied': 'هذا المقعد مشغول',
    'error.seat_locked': 'هذا المقعد مقفل', 'error.no_free_seat': 'لا يوجد مقعد فارغ', 'error.chat_muted': 'الدردشة موقوفة عنك',
    'error.rate_limited': 'أسرع مما ينبغي: انتظر قليلًا', 'error.forbidden': 'هذا للمضيف وحده', 'error.banned': 'أنت محظور من هذه الغرفة',
    'error.room_not_found': 'لا توجد غرفة بهذا الاسم', 'error.unauthorized': 'رُفض الدخول', 'error.token_expired': 'انتهت صلاحية الدخول',
  },
};

export function pickLanguage(requested) {
  const candidates = [requested, localStorage.getItem('majlis.language'), ...(navigator.languages || [navigator.language])];
  for (const candidate of candidates) {
    const code = (candidate || '').slice(0, 2).toLowerCase();
    if (strings[code]) return code;
  }
  return 'en';
}

export function translator(language) {
  const table = strings[language] || strings.en;
  return (key, values = {}) => {
    const text = table[key] ?? strings.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
  };
}

export function direction(language) {
  return language === 'ar' ? 'rtl' : 'ltr';
}

// Every language has every key (checked by the tests).
export function missingKeys() {
  const keys = Object.keys(strings.en);
  return Object.fromEntries(Object.entries(strings).map(([code, table]) => [code, keys.filter((key) => !(key in table))]));
}
