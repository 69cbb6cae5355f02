"""Graders of the toy airline benchmark (AgentDojo's task-class shape), with a seeded grader defect
next to a near miss that must stay silent. `toollint demo` lints this file with airline_tools.py."""


class BaseUserTask:  # stand-in for the benchmark's task base class, so this file needs nothing installed
    pass


class UserTask7(BaseUserTask):
    """Seeded: the verdict comes from the agent's record (the call it made), never from the state."""

    def utility_from_traces(self, model_output, pre_environment, post_environment, traces):
        return any(call.function == "book_reservation" and call.args["seats"] == 2 for call in traces)


class UserTask8(BaseUserTask):
    """Near miss: the booking is read back from the state it leaves."""

    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return post_environment.reservations["R8"].seats == 2
