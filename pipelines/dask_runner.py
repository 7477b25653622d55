"""Beam's DaskRunner with side inputs that are computed once, in the graph, not again inside every task.

Beam 2.77's DaskRunner hands a step's tasks each side input as the Dask bag that makes it, and each task
computes that bag's whole graph again from the input files (`DaskBagWindowedIterator.__iter__`,
`list(bag)`, a nested computation on the cluster while the task waits): the audit's five side inputs
(tables, limits, shoe groups, round index, held rounds) re-read the night's shoes and rounds for every
task that reads them, 3/4 of the workers' task time at 300k (bench/CHANGES.md, 2026-12-06). Here a
side input is the bag's value as a dependency of the tasks: the scheduler computes it once, from the same
read as the rest of the graph, and sends it to each worker once. The DoFns see the same values in the same
order, so the outputs are unchanged. What a DoFn gives in finish_bundle is kept too (Beam's drops it).

`pitboss audit ... -- --runner=DaskRunner` (Beam's name or its module path) runs this one (pipelines.audit).
"""

from __future__ import annotations

import contextlib
import itertools

import apache_beam as beam
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, _OutputHandler
from apache_beam.runners.dask import dask_runner as beam_dask
from apache_beam.runners.dask import transform_evaluator as evaluator
from apache_beam.transforms.sideinputs import SideInputMap


def _windowed(values, window_fn) -> list:
    return [evaluator.get_windowed_value(value, window_fn) for value in values]


def _all_of(partitions) -> list:
    """A bag's partitions (lists or iterators) as one list, in the bag's order."""
    return list(itertools.chain.from_iterable(partitions))


class _Step:
    """What Beam's translation hands each bundle of a ParDo, in one object: its receivers are also inside its
    invoker's output handler, and must stay the same object in the task (Dask's graph does not look into a
    plain object: it is pickled whole)."""

    def __init__(self, invoker_args: list, invoker_kwargs: dict, receivers, views: list):
        self.invoker_args, self.invoker_kwargs, self.receivers = invoker_args, invoker_kwargs, receivers
        self.views = views  # each side input's (view class, view options, window fn)


def _bundle(items, step: _Step, *values):
    """One bundle of a ParDo (a partition of its bag), as Beam's transform_evaluator.apply_dofn_to_bundle with
    the side inputs given as their bags' computed values, and what the DoFn gives in finish_bundle kept too
    (Beam's drops it: the audit's groups side by side, `--workers`, give their last results there)."""
    sides = [SideInputMap(view, options, _windowed(value, window_fn))
             for (view, options, window_fn), value in zip(step.views, values, strict=True)]
    invoker = DoFnInvoker.create_invoker(*step.invoker_args, **step.invoker_kwargs, side_inputs=sides)
    invoker.invoke_setup()
    invoker.invoke_start_bundle()
    for item in items:
        invoker.invoke_process(item)
    invoker.invoke_finish_bundle()
    invoker.invoke_teardown()
    return [value.value for value in step.receivers.values]


class _ParDo(evaluator.ParDo):
    """Beam's ParDo translation (transform_evaluator.ParDo.apply, Beam 2.77), its side inputs' bags made
    dependencies of its tasks."""

    def apply(self, input_bag, side_inputs=None):
        import dask

        transform = self.transform
        args, kwargs = transform.raw_side_inputs
        main_input = next(iter(self.applied.main_inputs.values()))
        window_fn = main_input.windowing.windowfn if hasattr(main_input, "windowing") else None
        receivers = evaluator.OneReceiver()
        invoker_args = [
            DoFnSignature(transform.fn),
            _OutputHandler(
                window_fn=window_fn, main_receivers=receivers[None], tagged_receivers=receivers,
                per_element_output_counter=None, output_batch_converter=None, process_yields_batches=False,
                process_batch_yields_elements=False),
        ]
        invoker_kwargs = dict(context=DoFnContext(transform.label, state=None), input_args=list(args),
                              input_kwargs=kwargs, user_state_context=None,
                              bundle_finalizer_param=beam.DoFn.BundleFinalizerParam())
        views, values = [], []
        for side in side_inputs or ():
            iterator = side._iterable  # DaskBagWindowedIterator(bag, window fn), as Beam's visitor builds it
            views.append((side._view_class, side._view_options, iterator.window_fn))
            values.append(dask.delayed(_all_of)(iterator.bag.to_delayed(optimize_graph=False)))
        return input_bag.map(evaluator.get_windowed_value, window_fn).map_partitions(
            _bundle, _Step(invoker_args, invoker_kwargs, receivers, views), *values)


class DaskRunner(beam_dask.DaskRunner):
    """Beam's DaskRunner, side inputs computed once per run (above)."""

    def run_pipeline(self, pipeline, options):
        import dask

        # A GroupByKey is a bag's groupby, which on a cluster shuffles by tasks; named here, Dask does not import
        # its dataframe package (pandas) to find that out (0.8 s of the driver's CPU)
        with _translated(beam.ParDo, _ParDo), dask.config.set({"dataframe.shuffle.method": "tasks"}):
            return super().run_pipeline(pipeline, options)


@contextlib.contextmanager
def _translated(transform, op):
    """Beam's DaskRunner translating `transform` with `op` while the pipeline is turned into Dask bags."""
    table = evaluator.TRANSLATIONS
    before = table[transform]
    table[transform] = op
    try:
        yield
    finally:
        table[transform] = before
