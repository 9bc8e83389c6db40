// A reply rendered as markdown while it streams: GFM (tables, strikethrough, task lists, autolinks),
// sanitized (no raw HTML is parsed at all, and rehype-sanitize drops unsafe attributes and URLs),
// code highlighted by highlight.js and a copy button on every code block.
import { memo, type ComponentProps } from "react";
import ReactMarkdown, { type Components, type ExtraProps } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import rehypeSanitize from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import remend, { type RemendOptions } from "remend";
import { t } from "../i18n";
import { CopyButton } from "./CopyButton";
import "highlight.js/styles/github.css";

// While a reply streams its markdown is often cut mid-way (`**bo`, `[link`): remend closes what is
// open so that the half-written part renders as it will, not as raw asterisks. An unfinished link
// shows as its text only; no math.
const STREAMING: RemendOptions = { linkMode: "text-only", katex: false, inlineKatex: false };

type Element = NonNullable<ExtraProps["node"]>;
type ElementContent = Element["children"][number];

const remarkPlugins = [remarkGfm];
// Sanitize first, then highlight: the highlighter's own class names are then kept.
const rehypePlugins = [rehypeSanitize, [rehypeHighlight, { detect: false }]] as ComponentProps<
  typeof ReactMarkdown
>["rehypePlugins"];

function textOf(node: ElementContent | Element): string {
  if (node.type === "text") return node.value;
  if (node.type === "element") return node.children.map(textOf).join("");
  return "";
}

function languageOf(pre: Element | undefined): string | null {
  const code = pre?.children.find((child): child is Element => child.type === "element" && child.tagName === "code");
  const classes = code?.properties.className;
  if (!Array.isArray(classes)) return null;
  const language = classes.map(String).find((name) => name.startsWith("language-"));
  return language ? language.slice("language-".length) : null;
}

const components: Components = {
  pre({ node, children }) {
    const code = node ? textOf(node).replace(/\n$/, "") : "";
    const language = languageOf(node);
    return (
      <div className="code-block" data-testid="code-block">
        <div className="code-head">
          <span className="code-language">{language ?? t.chat.code}</span>
          <CopyButton text={code} label={t.chat.copyCode} testId="copy-code" />
        </div>
        <pre>{children}</pre>
      </div>
    );
  },
  a({ children, href }) {
    return (
      <a href={href} target="_blank" rel="noopener noreferrer nofollow">
        {children}
      </a>
    );
  },
  table({ children }) {
    return (
      <div className="table-scroll">
        <table>{children}</table>
      </div>
    );
  },
};

/** Re-parses only when the text changes (each streamed delta), not on every render of the list. */
const Markdown = memo(function Markdown({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={remarkPlugins} rehypePlugins={rehypePlugins} components={components}>
        {streaming ? remend(text, STREAMING) : text}
      </ReactMarkdown>
    </div>
  );
});

export default Markdown;
