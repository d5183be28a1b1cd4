"""Tool-call scenarios: client tools (the turn ends and the agent waits) and a built-in web search."""

from __future__ import annotations

from collections.abc import Sequence

from .._scenarios import Scenario, ScenarioContext
from .._steps import Log, Preview, Sleep, Step, Together, ToolCall, tool_call_entry
from ._common import commit_then_complete, json_param, say, think
from ._context import answer_from_context, memory_answer, results_since_user

PARIS = ToolCall("get_weather", {"city": "Paris"})
TOKYO = ToolCall("get_weather", {"city": "Tokyo"})
WEATHER_THINKING = "The user wants the current weather in Paris. I'll call get_weather."
AGENT_THINKING = "The user asked me to call a tool; I'll call it."
AGENT_TEXT = "Hello! This is the fake conol agent."
USE_TOOL_ANSWER = "The tool returned: "
USE_TOOL_NO_TOOL = "I have no tool to run."
# how every scenario ending on a client tool call ends
_WAITS = "; then the agent waits: status stays running, no done, stream open"


def _builtin_websearch() -> list[Step]:
    query = {"query": "current weather in Paris"}
    found = "Paris, France: 18°C, light rain, wind 12 km/h."
    answer = "According to a web search, it is 18°C with light rain in Paris right now."
    first, *rest = say(answer, 5, stage="s2")
    assert isinstance(first, Preview)
    return [
        *think("I should search the web for the current weather in Paris.", 2, stage="s1"),
        ToolCall("WebSearch", query, stage="s1"),
        Sleep(0.3),
        # the duplicate adds the result, in the same event as the answer's first snapshot
        Together((ToolCall("WebSearch", query, result=found, stage="s2"), first)),
        *rest,
        *commit_then_complete(answer, 0.4, stage="s2"),
    ]


def tool_result_in(messages: Sequence[str]) -> str | None:
    """The text after ``]: `` of the last ``[Tool result #...]`` up to the end of its line, if any."""
    text = "\n".join(messages)
    start = text.rfind("[Tool result #")
    if start < 0:
        return None
    sep = text.find("]: ", start)
    if sep < 0:
        return ""
    end = text.find("\n", sep)
    return text[sep + 3 : end if end >= 0 else len(text)]


def _tool_loop(ctx: ScenarioContext) -> list[Step]:
    result = tool_result_in(ctx.messages)
    if result is None:
        return [*think(WEATHER_THINKING), Sleep(0.05), PARIS]
    answer = f"The weather in Paris is {result}."
    return [
        *think("I have the tool result; answer with it.", 2),
        *say(answer, 4),
        *commit_then_complete(answer, 0.3),
    ]


def _agent_loop(ctx: ScenarioContext) -> list[Step]:
    """An agent's task: ``calls`` calls of the first tool, one per turn, then the answer."""
    calls = ctx.param_int("calls", 3)
    done = results_since_user(ctx.messages)
    if done < calls and ctx.tools:
        return [
            *think(f"Step {done + 1}: call {ctx.tools[0]}.", 2),
            Sleep(0.02),
            ToolCall(ctx.tools[0], {"step": done + 1}),
        ]
    answer = f"Finished after {done} tool call(s)."
    return [*think("All steps done; answer.", 2), *say(answer, 3), *commit_then_complete(answer, 0.2)]


def _use_tool(ctx: ScenarioContext) -> list[Step]:
    """An agent asked to use a tool: calls ``name`` (default: the first tool offered) with ``args``
    once; with its result back, answers with it."""
    result = tool_result_in(ctx.messages) if results_since_user(ctx.messages) else None
    if result is None and ctx.tools:
        name = ctx.params.get("name") or ctx.tools[0]
        call = ToolCall(name, json_param(ctx, "args", {}))
        return [*think(f"The user asked me to run {name}; I'll call it.", 2), Sleep(0.02), call]
    answer = USE_TOOL_NO_TOOL if result is None else f"{USE_TOOL_ANSWER}{result}"
    return [*think("Report what the tool returned.", 2), *say(answer, 3), *commit_then_complete(answer, 0.2)]


def _recall(ctx: ScenarioContext) -> list[Step]:
    """Memory across turns (``doctor --reuse``): asked for the word, says the last one it was told
    to remember anywhere in the session's transcript; otherwise ``OK.`` Offered client tools, it is
    ``tool_loop`` (the doctor's tool round trip runs on the same fake)."""
    if ctx.tools:
        return _tool_loop(ctx)
    answer = memory_answer(ctx.messages) or "OK."
    return [*think("Answer from memory.", 2), *say(answer, 2), *commit_then_complete(answer, 0.2)]


def _agent(ctx: ScenarioContext) -> list[Step]:
    """Does what a health check asks, quickly: with tools, call the first one; else a short answer.
    On a follow-up turn, what the session calls for comes first (tool results answered, a word
    recalled)."""
    answer = answer_from_context(ctx)
    if answer is not None:
        return answer
    if ctx.tools:
        return [*think(AGENT_THINKING, 2), Sleep(0.05), ToolCall(ctx.tools[0], {})]
    return [*think("Greet briefly.", 2), *say(AGENT_TEXT, 3), *commit_then_complete(AGENT_TEXT, 0.2)]


def _scripted_calls() -> list[Scenario]:
    return [
        Scenario(
            "tool_call",
            [*think(WEATHER_THINKING), Sleep(0.05), PARIS],
            description="thinking x3, then get_weather {city: Paris}" + _WAITS,
        ),
        Scenario(
            "tool_call_twice",
            [
                *think(WEATHER_THINKING, 2, stage="s1"),
                PARIS,
                Sleep(0.1),
                ToolCall("get_weather", {"city": "Paris"}, stage="s2"),
            ],
            description="the same get_weather Paris call logged in two stages" + _WAITS,
            log_mode="cumulative",
        ),
        Scenario(
            "text_and_tool",
            [*say("Let me check the weather.", 3), Sleep(0.05), PARIS],
            description="message 'Let me check the weather.' then the get_weather Paris call" + _WAITS,
        ),
        Scenario(
            "builtin_websearch",
            _builtin_websearch(),
            description="WebSearch call, a duplicate in a later stage adding the result (together with "
            "the answer's first snapshot), the answer; committed; completed 0.4 s later. No client calls",
            log_mode="cumulative",
        ),
        Scenario(
            "multi_tool",
            [
                *think("Two cities: call get_weather twice.", 2),
                Sleep(0.05),
                Log(tool_call_entry(PARIS, TOKYO)),
            ],
            description="ONE tool_call log with two calls: get_weather Paris, get_weather Tokyo" + _WAITS,
            omit_empty=True,
        ),
        Scenario(
            "tool_after_silence",
            [*think(WEATHER_THINKING, 2), Sleep(2.5), PARIS],
            description="thinking, 2.5 s of pings only, then the get_weather Paris call" + _WAITS,
        ),
    ]


def _prompt_driven_calls() -> list[Scenario]:
    return [
        Scenario(
            "agent",
            _agent,
            description="prompt-driven: on a follow-up turn after tool results, 'The tool returned: R.' "
            "(every result since the user's message), and asked for a word it was told to remember, the "
            "word ('OK.' when told); else with tools, thinking x2 then a call of the first tool with {}"
            + _WAITS
            + "; without tools, thinking x2, 'Hello! This is the fake conol agent.' x3, committed, "
            "completed 0.2 s later",
        ),
        Scenario(
            "recall",
            _recall,
            description="prompt-driven: asked 'what was the word', answers the last 'remember the word X' of "
            "the session's transcript (else 'I was not told a word.'); otherwise 'OK.'; offered client "
            "tools, what tool_loop does",
        ),
        Scenario(
            "agent_loop",
            _agent_loop,
            description="prompt-driven: while fewer than `calls` (param, default 3) tool results follow the "
            "last user message, a call of the first tool with {step: n}" + _WAITS + "; then 'Finished after "
            "N tool call(s).' (committed, completed 0.2 s later)",
        ),
        Scenario(
            "use_tool",
            _use_tool,
            description="prompt-driven: without a tool result since the last user message, thinking x2 then "
            "one call of `name` (param; default the first tool offered) with `args` (param, percent-encoded "
            "JSON; default {})" + _WAITS + f"; with one, answers {USE_TOOL_ANSWER!r} + the result's text "
            f"(committed, completed 0.2 s later); offered no tools, {USE_TOOL_NO_TOOL!r}",
        ),
        Scenario(
            "tool_loop",
            _tool_loop,
            description="with a '[Tool result #..]: X' in the messages: answers 'The weather in Paris is "
            "X.' (committed, completed 0.3 s later); else the get_weather Paris call" + _WAITS,
        ),
    ]


def tool_scenarios() -> list[Scenario]:
    return [*_scripted_calls(), *_prompt_driven_calls()]
