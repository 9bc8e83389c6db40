// Every string the console shows, in one place. Chinese is the default; another locale is
// one more object of the same shape in `locales`.
import type { MemoryType } from "./api/types";

const zhCN = {
  appName: "memchat 控制台",
  nav: {
    agents: "智能体",
    logout: "退出登录",
  },
  common: {
    save: "保存",
    cancel: "取消",
    delete: "删除",
    confirmDelete: "确认删除",
    edit: "编辑",
    loading: "加载中…",
    saving: "保存中…",
    retry: "重试",
    back: "返回",
    never: "暂无",
  },
  auth: {
    loginTitle: "登录",
    signupTitle: "注册",
    email: "邮箱",
    password: "密码",
    passwordHint: "至少 8 个字符",
    displayName: "昵称（可选）",
    login: "登录",
    signup: "注册",
    toSignup: "还没有账号？注册",
    toLogin: "已有账号？登录",
    sessionExpired: "登录已失效，请重新登录。",
  },
  agents: {
    title: "我的智能体",
    create: "新建智能体",
    empty: "还没有智能体，先新建一个吧。",
    chat: "聊天",
    memories: "记忆库",
    noReply: "还没有回复",
    deleteConfirm: (name: string) => `删除「${name}」？它的对话、消息和记忆都会被删除。`,
    relationship: "关系阶段",
  },
  agentForm: {
    createTitle: "新建智能体",
    editTitle: "编辑智能体",
    name: "名称",
    handle: "账号 / 昵称",
    defaultPrompt: "人设（系统提示词）",
    defaultPromptHint: "留空则使用默认的聊天陪伴助手人设。",
    profileTitle: "聊天对象资料",
    profile: {
      status: "对象状态",
      lastActive: "最近活跃",
      relationship: "关系阶段",
      headline: "聊天主题",
      topic: "共同点",
      chemistryLabel: "心动值标签",
      chemistry: "心动值",
      rhythm: "互动节奏",
      profileNote: "对象备注",
    },
    submitCreate: "创建",
    submitEdit: "保存修改",
  },
  chat: {
    placeholder: "输入消息，Enter 发送，Shift+Enter 换行",
    send: "发送",
    stop: "停止",
    regenerate: "重新生成",
    loadEarlier: "加载更早的消息",
    noEarlier: "没有更早的消息了",
    empty: "还没有消息，打个招呼吧。",
    thinking: "正在思考…",
    you: "我",
    incomplete: "回复中断",
    errorTitle: "发送失败",
    sidePanel: "对话信息",
    summary: "对话摘要",
    noSummary: "还没有摘要，聊几句后会自动生成。",
    messageCount: "消息数",
    lastMessageAt: "最近消息",
    memories: "长期记忆",
    noMemories: "还没有记忆。",
    openLibrary: "打开记忆库",
    editAgent: "编辑智能体",
    messageNotFound: "找不到这条消息（可能已被重新生成替换）。",
  },
  memories: {
    title: (name: string) => `${name} 的记忆库`,
    all: "全部",
    active: "启用中",
    archived: "已归档",
    empty: "这里还没有记忆。",
    importance: "重要度",
    type: "类型",
    content: "内容",
    add: "添加记忆",
    addTitle: "手动添加一条记忆",
    archive: "归档",
    restore: "恢复",
    source: "查看来源消息",
    noSource: "手动添加",
    deleteConfirm: "删除这条记忆？此操作不可撤销。",
    updatedAt: "更新于",
    toChat: "回到聊天",
  },
  memoryTypes: {
    boundary: "边界",
    preference: "偏好",
    relationship_goal: "关系目标",
    conversation_style: "对话风格",
  } satisfies Record<MemoryType, string>,
  errors: {
    generic: "出错了，请稍后再试。",
    network: "无法连接服务器。",
    notFound: "没有找到。",
  },
};

export type Messages = typeof zhCN;

const locales: Record<string, Messages> = { "zh-CN": zhCN };

function pickLocale(): Messages {
  const wanted = localStorage.getItem("memchat.locale") ?? "zh-CN";
  return locales[wanted] ?? zhCN;
}

export const t: Messages = pickLocale();
export const dateLocale = "zh-CN";
