// The page's words in English, Simplified Chinese and Arabic. `{name}` marks a value.

export const languages = { en: 'English', zh: '中文', ar: 'العربية' };

const strings = {
  en: {
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
